/**
 * The proof a device gives on its WebSocket: the signed upgrade carries no nonce (recording
 * one would cost a database write per connection), so a captured upgrade could be replayed
 * within the timestamp skew. The gateway therefore sends a fresh random challenge on every
 * socket and the device answers with an HMAC over it; a replayed upgrade gets a challenge
 * its sender cannot answer. The string is domain-separated, so a proof can never pass for
 * a request signature or a transaction record's signature (or the other way round), and it
 * binds the protocol version and the device id.
 */
import { createHmac, randomFillSync, timingSafeEqual } from 'node:crypto';

/** Version of the socket handshake the proof belongs to. */
export const SOCKET_PROOF_VERSION = 1;

/** Random bytes in a socket challenge. */
const SOCKET_CHALLENGE_BYTES = 32;
/** Challenges drawn from the system's random generator at once. */
const CHALLENGES_PER_DRAW = 128;
const pool = Buffer.alloc(SOCKET_CHALLENGE_BYTES * CHALLENGES_PER_DRAW);
let used = CHALLENGES_PER_DRAW;

/**
 * A fresh challenge: 32 bytes of the system's cryptographic random generator, base64url.
 * A call of the generator costs about 5 µs whatever it is asked for (25 µs per handshake in
 * a gateway's profile under load), so the bytes of 128 challenges are drawn at once, and
 * every byte is handed out once (as `crypto.randomUUID` does with its own pool).
 */
export function newSocketChallenge(): string {
  if (used === CHALLENGES_PER_DRAW) {
    randomFillSync(pool);
    used = 0;
  }
  const start = used++ * SOCKET_CHALLENGE_BYTES;
  return pool.toString('base64url', start, start + SOCKET_CHALLENGE_BYTES);
}

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
