/**
 * What the edge store masks on its way to disk: the text parameters of every writing
 * statement (runtime/store/sqlite/rewriteWrites.ts) pass through {@link maskStoredText}, so
 * an error text, an audit or log row, a metric label, a task result or a command ack that
 * quotes a card number is written masked — whichever part of the agent or the engine wrote
 * it, and also the error row of the very step the state guard failed.
 *
 * Left as they are: the signed documents the terminal keeps to verify again later — the
 * store-and-forward record as it is inserted (signed by the device; the recorder refuses a
 * card number in clear before it signs), cached configuration documents (signed by the
 * cloud) and cached workflow definitions (checked against their hash). Masking a digit there
 * would break the signature or the hash and lose the document.
 */
import { maskStoredText } from './maskCardNumbers.js';

/** Statements whose parameters are signed or hashed documents (see the module comment). */
const SIGNED_WRITES = [
  /^\s*insert\s+into\s+"?saf_pending_transactions"?/i,
  /"?device_config_cache"?/i,
  /"?edge_workflow_cache"?/i,
];

/** The edge store's write rewriter: card numbers masked, signed documents left alone. */
export function maskCardWrites(sql: string): ((text: string) => string) | undefined {
  return SIGNED_WRITES.some((pattern) => pattern.test(sql)) ? undefined : maskStoredText;
}
