/**
 * The gate of `POST /api/v1/devices/{id}/commands`: version, payload schema and policies
 * (commandGate.ts); a command that needs approval is held (heldCommands.ts, in a transaction
 * of its own) instead of created. The reads are plain reads, not part of the command's
 * creation (itself one statement): a policy enabled while a command is being sent judges
 * the commands read after its commit — as it would inside a READ COMMITTED transaction,
 * which does not lock the policies it reads either.
 */
import type { CloudStore } from '../../runtime/index.js';
import type { CommandActor } from '../commands/store/commands/command.js';
import type { ApprovalRecord } from './store/approvals/index.js';
import type { CreateCommand } from '../link/commandTypes.js';
import { Problem } from '../problem.js';
import { gateCommands } from './commandGate.js';
import { holdCommand } from './heldCommands.js';
import { requesterOf } from './roles.js';
import type { GateReads } from './gateReads.js';

/** What the gate decided: hold it (the approval), or send it (at this version). */
export type DeviceCommandGate =
  { held: ApprovalRecord } | { held?: undefined; commandVersion: string | null };

/**
 * Gate `command` for device `deviceId` by `actor` (rules and the device read by `reads`, if given).
 * `accepted` turns the checked command into what is held (e.g. signs its definition).
 */
export async function gateDeviceCommand(
  store: CloudStore,
  deviceId: string,
  command: CreateCommand,
  actor: CommandActor,
  now: Date,
  reads?: GateReads,
  accepted: (command: CreateCommand) => CreateCommand = (c) => c,
): Promise<DeviceCommandGate> {
  const outcome = await gateCommands(
    store,
    { commands: [command], deviceIds: [deviceId], pathOf: () => '$' },
    requesterOf(actor),
    now,
    reads,
  );
  const resolved = outcome.resolved[0]!;
  if (!outcome.approval) return { commandVersion: resolved.version };
  const device = outcome.devices.get(deviceId);
  if (!device) throw new Problem(404, 'DEVICE_NOT_FOUND', `no device ${deviceId}`);
  const terms = outcome.approval;
  const held = await store.transaction((tx) =>
    holdCommand(
      tx,
      { deviceId, deviceType: device.deviceType, command: accepted(command), resolved, terms },
      actor,
      now,
    ),
  );
  return { held };
}
