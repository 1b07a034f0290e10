/**
 * Store-and-forward records, shared by the edge (which signs them) and the cloud (which
 * verifies and stores them): the record schema, its signature, and the clear-PAN check.
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
  signTransactionRecord,
  verifySigningText,
  verifyTransactionRecord,
} from './signature.js';
export { containsClearPan, findClearPan, luhnValid, type ClearPanHit } from './clearPan.js';
