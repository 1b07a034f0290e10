/**
 * Every kind of request an approval may hold, and what deciding needs to know of each:
 *
 * | kind                | holds (module)                         | released as                  | approver roles held for        |
 * |---------------------|----------------------------------------|------------------------------|--------------------------------|
 * | `device_command`    | a command to one device (heldCommands) | a PENDING command, pushed    | its type, on the device's type |
 * | `command_batch`     | a batch (heldFleetOperations)          | a PENDING batch, started     | each command type, no device   |
 * | `command_broadcast` | a broadcast (heldFleetOperations)      | a PENDING broadcast, started | its type, no device            |
 * | `config_layer`      | a layer publish (heldConfigLayers)     | the layer's next version     | UPDATE_CONFIG, no device type  |
 *
 * The approver must hold one of the approver roles for every command type of the request
 * (a scoped assignment counts only where it admits that type; for a fleet operation the
 * devices are many or not known yet, so a device-type-scoped one never counts).
 */
import { z } from 'zod';
import { batchEvents, bcEvents } from '../../actors/index.js';
import { stepBatch } from '../fleet/batchHost.js';
import { stepBroadcast } from '../fleet/broadcastHost.js';
import type { CacheChange, CloudHandle } from '../../runtime/index.js';
import type { CommandActor, CommandRecord } from '../commands/store/commands/command.js';
import type { ConfigLayerRecord } from '../config/store/configs/configLayer.js';
import type { BatchRecord } from '../fleet/store/batches/batch.js';
import type { BroadcastRecord } from '../fleet/store/broadcasts/broadcast.js';
import type { ApprovalRecord } from './store/approvals/index.js';
import type { GatewayContext } from '../context.js';
import type { Keyring } from '../keys.js';
import { Problem } from '../problem.js';
import { canonicalCommandType } from './commandRisk.js';
import { heldCommandSchema, releaseCommand } from './heldCommands.js';
import { heldConfigLayerSchema, releaseConfigLayer } from './heldConfigLayers.js';
import {
  heldBatchSchema,
  heldBroadcastSchema,
  releaseActor,
  releaseBatch,
  releaseBroadcast,
} from './heldFleetOperations.js';
import type { RoleContext } from './roles.js';

/** Any held request (command_approvals.command_request), by its `kind`. */
export const heldRequestSchema = z.discriminatedUnion('kind', [
  heldCommandSchema,
  heldBatchSchema,
  heldBroadcastSchema,
  heldConfigLayerSchema,
]);
/** A held request. */
export type HeldRequest = z.output<typeof heldRequestSchema>;

/** What a granted approval created. */
export type Released =
  | { kind: 'device_command'; command: CommandRecord }
  | { kind: 'command_batch'; batch: BatchRecord; actor: CommandActor }
  | { kind: 'command_broadcast'; broadcast: BroadcastRecord; actor: CommandActor }
  | { kind: 'config_layer'; layer: ConfigLayerRecord };

/** What releasing needs besides the transaction: where a push comes from, signing, caches. */
export interface ReleaseContext {
  /** The origin of the command notifications a release sends. */
  origin: string;
  keys: Keyring;
  /** Drops cached document ETags on every gateway with the commit (a layer publish). */
  changed: (change: CacheChange) => Promise<void>;
}

/** The request `approval` holds; 409 APPROVAL_REQUEST_UNREADABLE when it does not parse. */
export function heldOf(approval: ApprovalRecord): HeldRequest {
  const parsed = heldRequestSchema.safeParse(approval.commandRequest);
  if (!parsed.success)
    throw new Problem(
      409,
      'APPROVAL_REQUEST_UNREADABLE',
      `approval ${approval.approvalId} holds a request this gateway cannot carry out`,
    );
  return parsed.data;
}

/** Where an approver must hold one of the approver roles: one context per command type. */
export function approverContexts(held: HeldRequest): RoleContext[] {
  switch (held.kind) {
    case 'device_command':
      return [
        { commandType: canonicalCommandType(held.command_type), deviceType: held.device_type },
      ];
    case 'command_batch':
      return [...new Set(held.commands.map((c) => canonicalCommandType(c.command_type)))].map(
        (commandType) => ({ commandType, deviceType: null }),
      );
    case 'command_broadcast':
      return [{ commandType: canonicalCommandType(held.command.command_type), deviceType: null }];
    case 'config_layer':
      return [{ commandType: 'UPDATE_CONFIG', deviceType: null }];
    default: {
      const never: never = held;
      return never;
    }
  }
}

/**
 * Create what `held` holds now that `approval` is granted, inside the decision's
 * transaction; undefined when it can no longer be (a device command's device is gone).
 */
export async function releaseHeld(
  tx: CloudHandle,
  approval: ApprovalRecord,
  held: HeldRequest,
  release: ReleaseContext,
  now: Date,
): Promise<Released | undefined> {
  switch (held.kind) {
    case 'device_command': {
      const command = await releaseCommand(tx, approval, held, release.origin, now);
      return command ? { kind: 'device_command', command } : undefined;
    }
    case 'command_batch': {
      const actor = releaseActor(approval, held);
      return { kind: 'command_batch', batch: await releaseBatch(tx, held, actor, now), actor };
    }
    case 'command_broadcast': {
      const actor = releaseActor(approval, held);
      const broadcast = await releaseBroadcast(tx, held, actor, now);
      return { kind: 'command_broadcast', broadcast, actor };
    }
    case 'config_layer': {
      const layer = await releaseConfigLayer(
        tx,
        release.changed,
        release.keys,
        approval,
        held,
        now,
      );
      return { kind: 'config_layer', layer };
    }
    default: {
      const never: never = held;
      return never;
    }
  }
}

/** The approval's `result` id of what was released. */
export function releasedId(released: Released): Record<string, string> {
  switch (released.kind) {
    case 'device_command':
      return { command_id: released.command.commandId };
    case 'command_batch':
      return { batch_id: released.batch.batchId };
    case 'command_broadcast':
      return { broadcast_id: released.broadcast.broadcastId };
    case 'config_layer':
      return { config_id: released.layer.configId };
    default: {
      const never: never = released;
      return never;
    }
  }
}

/**
 * After the decision's commit: push a released command, start a released batch or broadcast
 * (its first commands created and pushed, as the fleet routes do after creating one). A
 * failure to start is logged, not thrown — the decision is committed, and the fleet
 * driver's periodic pass starts every PENDING batch and broadcast.
 */
export async function startReleased(
  ctx: GatewayContext,
  released: Released,
  origin: string,
): Promise<void> {
  const options = (actor: CommandActor) => ({ now: ctx.now(), actor, origin });
  try {
    switch (released.kind) {
      case 'device_command':
        ctx.commandEvents.wake([released.command.deviceId]);
        return;
      case 'command_batch': {
        const id = released.batch.batchId;
        const step = await stepBatch(ctx.store, id, batchEvents.start(), options(released.actor));
        if (step) ctx.commandEvents.wake(step.woken);
        return;
      }
      case 'command_broadcast': {
        const id = released.broadcast.broadcastId;
        const start = bcEvents.start(ctx.now(), 0);
        const step = await stepBroadcast(ctx.store, id, start, options(released.actor));
        if (step) ctx.commandEvents.wake(step.woken);
        return;
      }
      case 'config_layer': // devices fetch it at their next poll; caches were told at commit
        return;
      default: {
        const never: never = released;
        return never;
      }
    }
  } catch (error) {
    ctx.app.log.warn(
      { err: error, released: releasedId(released) },
      'starting a released fleet operation failed; the fleet driver will start it',
    );
  }
}
