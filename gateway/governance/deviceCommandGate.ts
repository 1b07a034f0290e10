/**
 * The gate of `POST /api/v1/devices/{id}/commands`: version, payload schema and policies
 * (commandGate.ts); a command that needs approval is held (heldCommands.ts) instead of
 * created. Runs in the transaction that creates the command, so a policy cannot change
 * between the check and the write.
 */
import type { ApprovalRecord, CommandActor, StoreHandle } from '../../runtime/index.js';
import type { CreateCommand } from '../link/commandTypes.js';
import { Problem } from '../problem.js';
import { gateCommands } from './commandGate.js';
import { holdCommand } from './heldCommands.js';
import { requesterOf } from './roles.js';

/** What the gate decided: hold it (the approval), or send it (at this version). */
export type DeviceCommandGate =
  { held: ApprovalRecord } | { held?: undefined; commandVersion: string | null };

/** Gate `command` for device `deviceId` by `actor`, inside the caller's transaction. */
export async function gateDeviceCommand(
  tx: StoreHandle,
  deviceId: string,
  command: CreateCommand,
  actor: CommandActor,
  now: Date,
): Promise<DeviceCommandGate> {
  const outcome = await gateCommands(
    tx,
    { commands: [command], deviceIds: [deviceId], pathOf: () => '$' },
    requesterOf(actor),
    now,
  );
  const resolved = outcome.resolved[0]!;
  if (!outcome.approval) return { commandVersion: resolved.version };
  const device = outcome.devices.get(deviceId);
  if (!device) throw new Problem(404, 'DEVICE_NOT_FOUND', `no device ${deviceId}`);
  const held = await holdCommand(
    tx,
    { deviceId, deviceType: device.deviceType, command, resolved, terms: outcome.approval },
    actor,
    now,
  );
  return { held };
}
