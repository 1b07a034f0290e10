/**
 * Signed commands. Every command the cloud delivers to a device — pushed on its socket or
 * returned by its poll — carries `signature`: Ed25519, base64, by the cloud key, over the
 * canonical JSON of
 *
 * `{type: 'saffron.device-command.v1', command_id, device_id, command_type, payload,
 * created_at, expires_at}`
 *
 * - `command_id` and `device_id` bind the command to one device: a command captured on one
 *   terminal and replayed to another does not verify there, because the device checks it
 *   against its own id, not the id the command names.
 * - `command_type` and `payload` are what the device executes.
 * - `created_at` and `expires_at` fix when it was issued and until when it holds; they
 *   cannot be moved to make an old command look current.
 *
 * Delivery state (status, retry count, delivered_at) is not covered: it changes on every
 * redelivery and the device does not act on it. The cloud signs at delivery — the command
 * row needs no new column — and the device refuses a command whose signature does not
 * verify.
 */
import { canonicalJson } from '../definition/hash.js';
import { verifyEd25519 } from './ed25519.js';

/** The `type` member of the signed text. */
export const SIGNED_COMMAND_TYPE = 'saffron.device-command.v1';

/** What a command signature covers (the command's JSON form). */
export interface SignableCommand {
  command_id: string;
  device_id: string;
  command_type: string;
  payload: unknown;
  /** ISO 8601. */
  created_at: string;
  /** ISO 8601, or null for a command without expiry. */
  expires_at: string | null;
}

/** The exact text a command signature covers. */
export function commandSignedText(command: SignableCommand): string {
  return canonicalJson({
    type: SIGNED_COMMAND_TYPE,
    command_id: command.command_id,
    device_id: command.device_id,
    command_type: command.command_type,
    payload: command.payload ?? null,
    created_at: command.created_at,
    expires_at: command.expires_at ?? null,
  });
}

/**
 * Whether `command` (as received) carries the cloud key's signature for device `deviceId`.
 * The device's own id is checked, never the one the command names; a member of the wrong
 * type makes it fail.
 */
export function verifyCommandSignature(
  command: Record<string, unknown>,
  deviceId: string,
  publicKeyPem: string,
): boolean {
  const { command_id, command_type, created_at, expires_at } = command;
  if (
    typeof command_id !== 'string' ||
    typeof command_type !== 'string' ||
    typeof created_at !== 'string' ||
    (expires_at !== null && expires_at !== undefined && typeof expires_at !== 'string')
  )
    return false;
  if (command.device_id !== undefined && command.device_id !== deviceId) return false;
  const text = commandSignedText({
    command_id,
    device_id: deviceId,
    command_type,
    payload: command.payload,
    created_at,
    expires_at: expires_at ?? null,
  });
  return verifyEd25519(text, command.signature, publicKeyPem);
}
