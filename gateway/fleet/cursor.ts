/**
 * Opaque keyset cursors of the fleet lists (newest first): the last row's creation time
 * and id, base64url-encoded. A cursor that does not decode is a 400, not an empty page.
 */
import { Problem } from '../problem.js';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The position after which the next page starts. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

/** Encode the position of the last row of a page. */
export function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');
}

/** Decode a `cursor` query parameter; 400 BAD_CURSOR when it is not one of ours. */
export function decodeCursor(text: string): Cursor {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    const [at, id] = Array.isArray(decoded) ? (decoded as unknown[]) : [];
    // both go into SQL as typed parameters: a time the database can hold, a UUID
    if (typeof at !== 'string' || !ISO_TIME.test(at) || typeof id !== 'string' || !UUID.test(id))
      throw new Error('bad cursor');
    const createdAt = new Date(at);
    if (Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw new Problem(400, 'BAD_CURSOR', 'the cursor is not one this API returned');
  }
}
