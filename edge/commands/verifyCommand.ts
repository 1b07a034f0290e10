/**
 * What the device checks before it runs a command: that the cloud signed it for this device
 * (runtime/crypto/signedCommand.ts), and — for a command that installs a workflow
 * definition — that the cloud signed the definition when it accepted it
 * (runtime/crypto/signedDefinition.ts). A transport that is not trusted (a proxy, a
 * compromised network path, a plain-HTTP cloud URL) can then drop commands but not forge or
 * alter one, and a definition that did not go through the cloud's API — a command row
 * written straight into the database — is not installed even though its delivery is signed.
 *
 * Signatures are checked with node:crypto's `verify`, never compared as strings.
 */
import {
  DEFINITION_SIGNATURE_FIELD,
  verifyCommandSignature,
  verifyDefinitionSignature,
} from '../../runtime/index.js';
import type { EdgeCommand } from './command.js';
import { CommandError } from './errors.js';

/** Command types whose payload installs a workflow definition. */
const DEFINITION_COMMANDS: ReadonlySet<string> = new Set(['UPDATE_WORKFLOW', 'update_workflow']);

/**
 * Throw COMMAND_SIGNATURE_INVALID unless `command` is signed by the cloud key for
 * `deviceId`, then DEFINITION_SIGNATURE_INVALID unless the definition it carries (if any) is
 * signed too.
 */
export function verifyCommand(command: EdgeCommand, deviceId: string, publicKeyPem: string): void {
  if (!verifyCommandSignature(command, deviceId, publicKeyPem))
    throw new CommandError(
      'COMMAND_SIGNATURE_INVALID',
      typeof command.signature === 'string'
        ? 'the command signature does not verify against the cloud key for this device; not run'
        : 'the command is not signed by the cloud; not run',
    );
  if (!DEFINITION_COMMANDS.has(command.command_type)) return;
  const payload = command.payload as Record<string, unknown> | null;
  const workflowType = payload?.workflow_type;
  const yaml = payload?.definition_yaml;
  const valid =
    typeof workflowType === 'string' &&
    typeof yaml === 'string' &&
    verifyDefinitionSignature(
      { workflow_type: workflowType, definition_yaml: yaml },
      payload?.[DEFINITION_SIGNATURE_FIELD],
      publicKeyPem,
    );
  if (!valid)
    throw new CommandError(
      'DEFINITION_SIGNATURE_INVALID',
      'the workflow definition is not signed by the cloud (or was altered); nothing installed',
    );
}
