/**
 * Commands held for approval. A held command has no `device_commands` row at all — nothing
 * exists that the delivery sweep, a poll or a socket push could pick up — only its approval
 * (command_approvals) carrying the request, with the command id reserved for it. When the
 * approval is granted the command is created PENDING with that id in the same transaction
 * (COMMAND_CREATED, created by the requester), and the device is woken as for any new
 * command. `expires_in_seconds` counts from that moment, not from the request.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type CloudHandle } from '../../runtime/index.js';
import { type CommandActor, type CommandRecord } from '../commands/store/commands/command.js';
import { insertCommandWith } from '../commands/store/commands/insertCommand.js';
import { type ApprovalRecord } from './store/approvals/index.js';
import type { CreateCommand } from '../link/commandTypes.js';
import type { ResolvedCommand } from './commandVersions.js';
import type { ApprovalTerms } from './policies.js';
import { heldTerms, heldTermsShape, requestApproval } from './requestApproval.js';

/** The request a device command approval holds (command_approvals.command_request). */
export const heldCommandSchema = z.object({
  kind: z.literal('device_command'),
  command_id: z.uuid(),
  device_id: z.string(),
  command_type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  command_version: z.string().nullable(),
  max_retries: z.number().int(),
  expires_in_seconds: z.number().int().nullable(),
  ...heldTermsShape,
  /** The device's type when asked (scoped approver assignments match on it). */
  device_type: z.string().nullable(),
});
/** A held device command. */
export type HeldCommand = z.output<typeof heldCommandSchema>;

/** Hold `command` for `deviceId` under `terms`; returns the approval (PENDING). */
export function holdCommand(
  tx: CloudHandle,
  input: {
    deviceId: string;
    deviceType: string | null;
    command: CreateCommand;
    resolved: ResolvedCommand;
    terms: ApprovalTerms;
  },
  actor: CommandActor,
  now: Date,
): Promise<ApprovalRecord> {
  const { command, resolved, terms } = input;
  const held: HeldCommand = {
    kind: 'device_command',
    command_id: randomUUID(),
    device_id: input.deviceId,
    command_type: command.command_type,
    payload: command.payload,
    command_version: resolved.version,
    max_retries: command.max_retries,
    expires_in_seconds: command.expires_in_seconds ?? null,
    ...heldTerms(terms, resolved.risk, actor.role),
    device_type: input.deviceType,
  };
  return requestApproval(
    tx,
    { held, terms, commandType: command.command_type, risk: resolved.risk },
    actor,
    now,
  );
}

/**
 * Create the held command (PENDING) now that `approval` is granted, as created by its
 * requester; undefined when the device was deleted meanwhile. Inside the decision's
 * transaction.
 */
export function releaseCommand(
  tx: CloudHandle,
  approval: ApprovalRecord,
  held: HeldCommand,
  origin: string,
  now: Date,
): Promise<CommandRecord | undefined> {
  return insertCommandWith(
    tx,
    {
      commandId: held.command_id,
      deviceId: held.device_id,
      commandType: held.command_type,
      payload: held.payload,
      maxRetries: held.max_retries,
      expiresAt:
        held.expires_in_seconds === null
          ? null
          : new Date(now.getTime() + held.expires_in_seconds * 1000),
      commandVersion: held.command_version,
    },
    { actor: approval.requestedBy, role: held.requested_role },
    origin,
    now,
  );
}
