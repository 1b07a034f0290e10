/**
 * Why a command failed on the device. The code travels to the cloud in the FAILED ack
 * (`result.code`, and at the start of `error`), so an operator can tell a command this
 * agent does not know from one whose payload was wrong from one cut short by a restart.
 */
import { SaffronError } from '../../runtime/index.js';

/** Every code a {@link CommandError} can carry. */
export const COMMAND_ERROR_CODES = [
  'COMMAND_UNKNOWN_TYPE',
  'COMMAND_PAYLOAD_INVALID',
  'COMMAND_INTERRUPTED',
  'COMMAND_FAILED',
  'COMMAND_RESULT_INVALID',
  'COMMAND_SIGNATURE_INVALID',
  'DEFINITION_SIGNATURE_INVALID',
] as const;
/** One of {@link COMMAND_ERROR_CODES}. */
export type CommandErrorCode = (typeof COMMAND_ERROR_CODES)[number];

/**
 * A command the device could not carry out.
 *
 * - `COMMAND_UNKNOWN_TYPE`: no handler for the command type.
 * - `COMMAND_PAYLOAD_INVALID`: the payload does not fit the type (`details.issues`).
 * - `COMMAND_INTERRUPTED`: the agent stopped while the command ran; it is not run again.
 * - `COMMAND_FAILED`: the handler could not do it (its own error is the `cause`).
 * - `COMMAND_RESULT_INVALID`: the handler's result is not JSON.
 * - `COMMAND_SIGNATURE_INVALID`: the command carries no signature of the cloud key for this
 *   device, or one that does not verify (altered, forged, or meant for another device); it
 *   was not run.
 * - `DEFINITION_SIGNATURE_INVALID`: the workflow definition it carries was not signed by the
 *   cloud when the cloud accepted it (or was altered since); nothing was installed.
 */
export class CommandError extends SaffronError {
  override readonly name = 'CommandError';
  declare readonly code: CommandErrorCode;

  constructor(
    code: CommandErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, { ...options, retryable: false });
  }
}
