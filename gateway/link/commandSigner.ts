/**
 * The cloud's signature on every command it delivers (format: runtime/crypto/
 * signedCommand.ts), added at delivery — on the socket's push and in a device's poll —
 * rather than stored at creation, so the command row and the statements that create and
 * deliver it stay as they are (the device plane does no extra database work per message).
 *
 * An Ed25519 signature costs some 50 µs; a command is usually delivered once, but a
 * reconnecting device is pushed its unacked commands again, and a reconnect storm does that
 * for many devices at once. So the signer keeps the signatures of recent deliveries, keyed
 * by command id and checked against a SHA-256 of the signed text, in a bounded map (oldest
 * out first): a redelivery of the same command costs a hash, not a signature, and a command
 * whose signed content changed is signed again.
 *
 * An acked command is never pushed again, so its signature is dropped when its ack is
 * recorded (the hub calls `forget`). The map then holds only what may still be redelivered:
 * at 1,000 pushes/s the oldest-out bound alone kept 4 s of acked commands, which pushed out
 * the unacked ones a reconnecting device needs, and every entry outlived the young
 * generation — some 0.7 KB promoted per push for the next full collection to clear.
 */
import { createHash } from 'node:crypto';
import { commandSignedText } from '../../runtime/index.js';
import { type CommandRecord } from '../commands/store/commands/command.js';
import type { Keyring } from '../keys.js';
import { commandJson } from './present.js';

/** Signatures kept for redeliveries. */
const CACHED_SIGNATURES = 4096;

/** Signs commands for delivery. */
export interface CommandSigner {
  /** The signature of `command` (base64 Ed25519 over its signed text). */
  sign(command: CommandRecord): string;
  /** The command as delivered to its device: its JSON form with `signature`. */
  delivered(command: CommandRecord): ReturnType<typeof commandJson> & { signature: string };
  /** Drop what is kept for `commandId` (its ack is recorded: it is not delivered again). */
  forget(commandId: string): void;
}

/** A signer with the gateway's key and its own small cache. */
export function createCommandSigner(keys: Pick<Keyring, 'sign'>): CommandSigner {
  const cache = new Map<string, { digest: string; signature: string }>();
  const sign = (command: CommandRecord): string => {
    const text = commandSignedText({
      command_id: command.commandId,
      device_id: command.deviceId,
      command_type: command.commandType,
      payload: command.payload,
      created_at: command.createdAt.toISOString(),
      expires_at: command.expiresAt ? command.expiresAt.toISOString() : null,
    });
    const digest = createHash('sha256').update(text).digest('base64');
    const held = cache.get(command.commandId);
    if (held?.digest === digest) return held.signature;
    const signature = keys.sign(text);
    cache.delete(command.commandId);
    cache.set(command.commandId, { digest, signature });
    if (cache.size > CACHED_SIGNATURES) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    return signature;
  };
  return {
    sign,
    delivered: (command) => ({ ...commandJson(command), signature: sign(command) }),
    forget: (commandId) => void cache.delete(commandId),
  };
}
