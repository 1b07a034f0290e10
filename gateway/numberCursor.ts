/**
 * Opaque keyset cursors over an increasing number (an audit row id, a delivery's sequence):
 * the number of the last row seen, base64url-encoded. A cursor that does not decode is a
 * 400, not an empty page.
 */
import { Problem } from './problem.js';

/** The cursor after the row numbered `n`. */
export const encodeNumberCursor = (n: number): string =>
  Buffer.from(String(n)).toString('base64url');

/** Decode a `cursor` query parameter; 400 BAD_CURSOR when it is not one this API returned. */
export function decodeNumberCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{1,15}$/.test(text))
    throw new Problem(400, 'BAD_CURSOR', 'the cursor is not one this API returned');
  return Number(text);
}
