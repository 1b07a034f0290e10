/**
 * Store-and-forward records, shared by the edge (which signs them) and the cloud (which
 * verifies and stores them): the record schema, its signature, and the clear-PAN check;
 * and the summary of every workflow that ended on a device (summary.ts).
 */
export {
  MAX_SAF_BATCH,
  MAX_SAF_RECORD_BYTES,
  safCardSchema,
  safRecordSchema,
  type SafRecord,
} from './record.js';
export {
  recordSigningText,
  signSigningText,
  signTransactionRecord,
  verifySigningText,
  verifyTransactionRecord,
} from './signature.js';
export { CARD_DATA_KEYS, isCardDataKey, normalizeMemberName } from './cardDataKeys.js';
export {
  containsClearPan,
  findClearPan,
  jsonTextMayHoldPan,
  luhnValid,
  type ClearPanHit,
} from './clearPan.js';
export {
  MAX_SUMMARY_BATCH,
  MAX_SUMMARY_BYTES,
  workflowSummarySchema,
  type WorkflowSummary,
} from './summary.js';
