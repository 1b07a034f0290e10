/**
 * Nonces one gateway accepted, announced to the others: a gateway answers a device's read
 * from memory and writes its nonce behind in batches (gateway/auth/nonces.ts); the batch's
 * transaction also NOTIFYs `saffron_nonces`, so every other gateway learns the nonces at
 * the batch's commit and refuses their replay from memory too — without a read per request.
 *
 * Payload: `schema|origin|sequence|device nonce expiry,…` with the sequence and the expiry in
 * base 36 (milliseconds); the list may be empty (a gateway's sign of life: it listens for its
 * own announcements to know its connection keeps up).
 * Device ids and nonces contain neither `|`, `,` nor spaces (gateway/auth/authenticate.ts),
 * and long lists are split to stay under NOTIFY's 8000-byte payload.
 */
import { sql } from 'kysely';
import type { UsedNonce } from './rememberNonces.js';
import type { CloudHandle, ChannelListener } from '../../../../runtime/index.js';

/** The channel nonce announcements use. */
export const NONCES_CHANNEL = 'saffron_nonces';

const MAX_PAYLOAD = 7000;

/** Queue announcement `sequence` of `nonces` in the caller's transaction (PostgreSQL only). */
export async function notifyNonces(
  h: CloudHandle,
  nonces: readonly UsedNonce[],
  origin: string,
  sequence: number,
): Promise<void> {
  if (h.dialect !== 'postgres') return;
  const chunks: string[] = [];
  let current = '';
  for (const n of nonces) {
    const entry = `${n.deviceId} ${n.nonce} ${n.expiresAt.getTime().toString(36)}`;
    if (current && current.length + entry.length + 1 > MAX_PAYLOAD) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current},${entry}` : entry;
  }
  chunks.push(current); // the last one, perhaps empty
  for (const chunk of chunks)
    await sql`SELECT pg_notify(${NONCES_CHANNEL}, current_schema() || '|' || ${`${origin}|${sequence.toString(36)}|${chunk}`})`.execute(
      h.db,
    );
}

/** Options of {@link listenForNonces}. */
export interface NonceListenerOptions {
  /** Nonces gateway `origin` accepted, in its announcement `sequence`. */
  onNonces(origin: string, sequence: number, nonces: UsedNonce[]): void;
  /** The connection was re-established; announcements may have been missed. */
  onReconnect(): void;
}

/** Listen for announced nonces on `listener`; returns a function that stops. */
export function listenForNonces(
  listener: ChannelListener,
  options: NonceListenerOptions,
): Promise<() => Promise<void>> {
  return listener.listen(NONCES_CHANNEL, {
    onPayload(payload) {
      const [origin = '', sequence = '', list = ''] = payload.split('|');
      const nonces: UsedNonce[] = [];
      for (const entry of list.split(',')) {
        const [deviceId, nonce, expiry] = entry.split(' ');
        if (!deviceId || !nonce || !expiry) continue;
        nonces.push({ deviceId, nonce, expiresAt: new Date(parseInt(expiry, 36)) });
      }
      options.onNonces(origin, parseInt(sequence, 36), nonces);
    },
    onReconnect: () => options.onReconnect(),
  });
}
