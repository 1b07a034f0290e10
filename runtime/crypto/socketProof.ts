/**
 * The proof a device gives on its WebSocket: the signed upgrade carries no nonce (recording
 * one would cost a database write per connection), so a captured upgrade could be replayed
 * within the timestamp skew. The gateway therefore sends a fresh random challenge on every
 * socket and the device answers with an HMAC over it; a replayed upgrade gets a challenge
 * its sender cannot answer. The string is domain-separated, so a proof can never pass for
 * a request signature or a transaction record's signature (or the other way round), and it
 * binds the protocol version and the device id.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Version of the socket handshake the proof belongs to. */
export const SOCKET_PROOF_VERSION = 1;

/** The string a device signs to prove it holds its secret on a socket. */
export function socketProofString(deviceId: string, challenge: string): string {
  return `saffron-device-socket-proof\nv${SOCKET_PROOF_VERSION}\n${deviceId}\n${challenge}`;
}

/** The proof of `deviceId` for `challenge` under `secret` (base64url HMAC-SHA256). */
export function signSocketProof(secret: string, deviceId: string, challenge: string): string {
  return createHmac('sha256', secret)
    .update(socketProofString(deviceId, challenge))
    .digest('base64url');
}

/** Whether `proof` is `deviceId`'s for `challenge` under `secret`; constant time in the proof. */
export function verifySocketProof(
  secret: string,
  deviceId: string,
  challenge: string,
  proof: string,
): boolean {
  const expected = Buffer.from(signSocketProof(secret, deviceId, challenge));
  const given = Buffer.from(proof);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
