/**
 * The device WebSocket protocol: JSON text frames, one object each, told apart by `type`.
 *
 * Handshake: the upgrade is signed without a nonce, so it proves who signed it but not that
 * it is fresh. The server's first frame is therefore `challenge` (32 random bytes), and the
 * device's `hello` carries `proof` = base64url HMAC-SHA256(device secret,
 * `saffron-device-socket-proof\nv1\n<device_id>\n<challenge>`) (runtime/crypto/
 * socketProof.ts). Until the proof is verified — against the current secret and a rotation's
 * grace-period one — the session does nothing: no command, no presence. A socket that has
 * not proven itself within `proofTimeoutMs` is closed with 4002; a wrong or missing proof
 * closes it with 4003. A replayed upgrade thus yields a socket that can never say hello.
 *
 * Deprecated, accepted for one release: an upgrade that carries `X-Saffron-Nonce` is
 * checked as before (the nonce is recorded in the shared table before the upgrade is
 * answered), gets no challenge, and its plain `hello` is accepted without a proof.
 *
 * device → server
 * - `{type: 'hello', proof?, last_command_id?}` — first frame of a session (`proof` is
 *   required after a challenge; an `ack` before it is answered `error` PROOF_REQUIRED). The
 *   server answers `welcome`, then pushes every command DELIVERED earlier but never acked
 *   (the previous connection may have lost it) and every due PENDING one. `last_command_id`
 *   is informational: the server's record of what is unacked decides what is pushed again.
 * - `{type: 'ack', command_id, status: 'EXECUTED'|'FAILED', result?, error?}` — answered
 *   with `acked` (also for a repeated identical ack) or `error` (`COMMAND_NOT_FOUND`,
 *   `ACK_CONFLICT`, …).
 * - `{type: 'heartbeat'}` — any frame proves the device alive; a session silent for three
 *   heartbeat intervals is closed.
 *
 * server → device
 * - `{type: 'challenge', challenge, version: 1}` — first frame of a socket upgraded without
 *   a nonce; `challenge` is base64url.
 * - `{type: 'welcome', session_id, heartbeat_interval_ms, max_message_bytes}`
 * - `{type: 'command', command}` — the command as `GET …/commands` shows it to the device,
 *   with the cloud's `signature` (runtime/crypto/signedCommand.ts). A command may
 *   arrive more than once (a push on reconnect, a retry after a lost ack): the device runs
 *   each `command_id` once and acks again what it already ran.
 * - `{type: 'acked', command_id, status, repeated}`, `{type: 'error', code, message, command_id?}`
 * - `{type: 'heartbeat'}` every interval; the device answers with a heartbeat.
 *
 * Close codes: 1001 server shutting down, 1003 binary frame, 1008 too many bad frames,
 * 1009 message too large, 1013 the device reads too slowly (back-pressure; reconnect
 * later), 4000 heartbeat timeout, 4001 replaced by a newer session of the same device,
 * 4002 no proof in time, 4003 a wrong or missing proof.
 */
import { z } from 'zod';

/** Close codes the server uses. */
export const CLOSE = {
  shutdown: 1001,
  binary: 1003,
  badFrames: 1008,
  tooLarge: 1009,
  backpressure: 1013,
  heartbeatTimeout: 4000,
  replaced: 4001,
  proofTimeout: 4002,
  badProof: 4003,
} as const;

/** A frame a device may send. */
export const inboundFrame = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('hello'),
    last_command_id: z.uuid().optional(),
    proof: z.string().max(128).optional(),
  }),
  z.strictObject({
    type: z.literal('ack'),
    command_id: z.uuid(),
    status: z.enum(['EXECUTED', 'FAILED']),
    result: z.unknown().optional(),
    error: z.string().max(2000).optional(),
  }),
  z.strictObject({ type: z.literal('heartbeat') }),
]);

/** A frame a device sends. */
export type InboundFrame = z.output<typeof inboundFrame>;

/** A frame the server sends. */
export type OutboundFrame =
  | { type: 'challenge'; challenge: string; version: number }
  | {
      type: 'welcome';
      session_id: string;
      heartbeat_interval_ms: number;
      max_message_bytes: number;
    }
  | { type: 'command'; command: unknown }
  | { type: 'acked'; command_id: string; status: string; repeated: boolean }
  | { type: 'error'; code: string; message: string; command_id?: string }
  | { type: 'heartbeat' };
