/**
 * Creating fleet operations from validated requests, inside the caller's transaction — the
 * same functions serve the API and the scheduler, so a scheduled run creates exactly what
 * the equivalent request would. Nothing is sent here: a new batch or broadcast is PENDING
 * until the fleet driver steps it with `start` (at once after the commit; the periodic
 * pass starts any it missed).
 *
 * A request whose commands an authorization policy holds for approval creates nothing but
 * its approval (governance/heldFleetOperations.ts): the outcome is then `held`, and the batch
 * or broadcast is created — with the id reserved in the approval — when enough approvers
 * agree. A schedule's run asks in the name of the schedule's creator.
 */
import { type BatchCommandSpec } from '../../actors/index.js';
import { insertNewBatch, type BatchSpec } from './batchHost.js';
import { insertNewBroadcast, type BroadcastSpec } from './broadcastHost.js';
import { findClearPan, type CloudHandle } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { findMissingDevices } from '../devices/store/devices/findMissingDevices.js';
import { type BatchRecord } from './store/batches/batch.js';
import { type BroadcastRecord } from './store/broadcasts/broadcast.js';
import { type TemplateRecord } from './store/templates/template.js';
import { requestSubject, type ApprovalRecord } from '../governance/store/approvals/index.js';
import { gateCommands } from '../governance/commandGate.js';
import { holdBatch, holdBroadcast, type ScheduleRun } from '../governance/heldFleetOperations.js';
import { requesterOf } from '../governance/roles.js';
import type { CreateCommand } from '../link/commandTypes.js';
import { signCommandDefinition, type DefinitionSigner } from '../link/signDefinitions.js';
import { Problem } from '../problem.js';
import {
  DEFAULT_BROADCAST_COMMAND_TTL_SECONDS,
  type ApplyTarget,
  type Rollout,
  type TargetFilter,
} from './schemas.js';
import { renderTemplateCommands, templateDefinition } from './templates.js';

/** A batch request. */
export interface BatchRequest {
  name: string | null;
  mode: 'SEQUENTIAL' | 'PARALLEL';
  stopOnFailure: boolean;
  deviceIds: readonly string[];
  commands: readonly CreateCommand[];
}

/** A broadcast request. */
export interface BroadcastRequest {
  command: CreateCommand;
  target: TargetFilter;
  rollout: Rollout;
  failureThreshold: number | null;
}

/** A request held for approval: nothing was created but its approval. */
export interface Held {
  kind: 'held';
  approval: ApprovalRecord;
}
/** What creating a batch did. */
export type BatchOutcome = { kind: 'batch'; batch: BatchRecord } | Held;
/** What creating a broadcast did. */
export type BroadcastOutcome = { kind: 'broadcast'; broadcast: BroadcastRecord } | Held;
/** What a template application (or a schedule's run) did. */
export type Applied = BatchOutcome | BroadcastOutcome;

/** Options of the create functions. */
export interface CreateOptions {
  /** Signs the workflow definitions of the commands created (link/signDefinitions.ts). */
  keys: DefinitionSigner;
  /**
   * Unknown devices are a 422 UNKNOWN_DEVICES (default: the API); a scheduled run leaves
   * them to fail as items instead.
   */
  requireDevices?: boolean;
  /** The schedule's run creating it (a held request is then asked by its creator). */
  run?: ScheduleRun;
}

/**
 * The ids an outcome names, for audit rows: the batch or broadcast (when held, the id
 * reserved for it) and, when held, the approval.
 */
export function appliedIds(applied: Applied): {
  batchId?: string;
  broadcastId?: string;
  approvalId?: string;
} {
  switch (applied.kind) {
    case 'batch':
      return { batchId: applied.batch.batchId };
    case 'broadcast':
      return { broadcastId: applied.broadcast.broadcastId };
    case 'held': {
      const { batchId, broadcastId } = requestSubject(applied.approval.commandRequest);
      return {
        ...(batchId !== undefined ? { batchId } : {}),
        ...(broadcastId !== undefined ? { broadcastId } : {}),
        approvalId: applied.approval.approvalId,
      };
    }
    default: {
      const never: never = applied;
      return never;
    }
  }
}

/** 422 CARD_DATA_IN_CLEAR when a payload holds what looks like a card number. */
export function refuseClearPan(commands: readonly CreateCommand[]): void {
  commands.forEach((command, i) => {
    const pan = findClearPan(command.payload);
    if (pan)
      throw new Problem(
        422,
        'CARD_DATA_IN_CLEAR',
        `command ${i}'s payload contains what looks like a card number in clear`,
      );
  });
}

const specOf = (
  keys: DefinitionSigner,
  c: CreateCommand,
  version: string | null | undefined,
): BatchCommandSpec => ({
  command_type: c.command_type,
  // signed once it passed the gate, before it is held or created
  payload: signCommandDefinition(keys, c.command_type, c.payload),
  max_retries: c.max_retries,
  ...(c.expires_in_seconds !== undefined ? { expires_in_seconds: c.expires_in_seconds } : {}),
  ...(version ? { command_version: version } : {}),
});

/** Create a batch, or hold it for approval (see the module comment). */
export async function createBatch(
  h: CloudHandle,
  request: BatchRequest,
  actor: CommandActor,
  now: Date,
  options: CreateOptions,
): Promise<BatchOutcome> {
  refuseClearPan(request.commands);
  if (options.requireDevices ?? true) {
    const missing = await findMissingDevices(h, request.deviceIds);
    if (missing.length > 0)
      throw new Problem(
        422,
        'UNKNOWN_DEVICES',
        `${missing.length} device(s) are not registered: ${missing.slice(0, 20).join(', ')}`,
        { device_ids: missing.slice(0, 100) },
      );
  }
  // command versions and authorization policies (governance/commandGate.ts)
  const gate = await gateCommands(
    h,
    { commands: request.commands, deviceIds: request.deviceIds, pathOf: (i) => `$.commands[${i}]` },
    requesterOf(actor),
    now,
  );
  const spec: BatchSpec = {
    name: request.name,
    mode: request.mode,
    stopOnFailure: request.stopOnFailure,
    commands: request.commands.map((c, i) => specOf(options.keys, c, gate.resolved[i]?.version)),
    deviceIds: request.deviceIds,
  };
  if (gate.approval) {
    const input = { spec, resolved: gate.resolved, terms: gate.approval, run: options.run };
    return { kind: 'held', approval: await holdBatch(h, input, actor, now) };
  }
  return { kind: 'batch', batch: await insertNewBatch(h, spec, actor, now) };
}

/**
 * Create a broadcast (its devices are picked phase by phase when it runs), or hold it for
 * approval (see the module comment).
 */
export async function createBroadcast(
  h: CloudHandle,
  request: BroadcastRequest,
  actor: CommandActor,
  now: Date,
  options: CreateOptions,
): Promise<BroadcastOutcome> {
  refuseClearPan([request.command]);
  // devices are picked phase by phase: every policy that may cover them applies
  const gate = await gateCommands(
    h,
    { commands: [request.command], deviceIds: 'any', pathOf: () => '$.command' },
    requesterOf(actor),
    now,
  );
  const spec: BroadcastSpec = {
    commandType: request.command.command_type,
    // signed once it passed the gate, before it is held or created
    payload: signCommandDefinition(
      options.keys,
      request.command.command_type,
      request.command.payload,
    ),
    maxRetries: request.command.max_retries,
    expiresInSeconds: request.command.expires_in_seconds ?? DEFAULT_BROADCAST_COMMAND_TTL_SECONDS,
    target: request.target,
    phases: request.rollout.phases,
    waitSeconds: request.rollout.wait_seconds,
    failureThreshold: request.failureThreshold,
    commandVersion: gate.resolved[0]?.version ?? null,
  };
  if (gate.approval) {
    const input = {
      spec,
      target: request.target,
      resolved: gate.resolved,
      terms: gate.approval,
      run: options.run,
    };
    return { kind: 'held', approval: await holdBroadcast(h, input, actor, now) };
  }
  return { kind: 'broadcast', broadcast: await insertNewBroadcast(h, spec, actor, now) };
}

/**
 * Render `template` with `values` (422 with paths when they do not fit) and create what
 * `target` asks for: a SEQUENTIAL batch for one device, a batch, or a broadcast (which
 * takes exactly one command) — or hold it for approval.
 */
export async function applyTemplate(
  h: CloudHandle,
  template: TemplateRecord,
  values: Record<string, unknown>,
  target: ApplyTarget,
  actor: CommandActor,
  now: Date,
  options: CreateOptions,
): Promise<Applied> {
  const rendered = renderTemplateCommands(
    templateDefinition(template.commands, template.variables),
    values,
  );
  if (!rendered.ok)
    throw new Problem(
      422,
      rendered.code,
      `template ${template.name} v${template.version}: ${rendered.issues
        .slice(0, 5)
        .map((i) => `${i.path}: ${i.message}`)
        .join('; ')}`,
      { errors: rendered.issues.slice(0, 50) },
    );
  const name = `${template.name} v${template.version}`;
  switch (target.kind) {
    case 'device':
      return createBatch(
        h,
        {
          name,
          mode: 'SEQUENTIAL',
          stopOnFailure: true,
          deviceIds: [target.device_id],
          commands: rendered.commands,
        },
        actor,
        now,
        options,
      );
    case 'batch':
      return createBatch(
        h,
        {
          name: target.name ?? name,
          mode: target.execution_mode,
          stopOnFailure: target.stop_on_failure,
          deviceIds: target.device_ids,
          commands: rendered.commands,
        },
        actor,
        now,
        options,
      );
    case 'broadcast': {
      const [command, ...more] = rendered.commands;
      if (!command || more.length > 0)
        throw new Problem(
          422,
          'TEMPLATE_NOT_BROADCASTABLE',
          `a broadcast sends one command; template ${name} has ${rendered.commands.length}`,
        );
      return createBroadcast(
        h,
        {
          command,
          target: target.target,
          rollout: target.rollout,
          failureThreshold: target.failure_threshold ?? null,
        },
        actor,
        now,
        options,
      );
    }
    default: {
      const never: never = target;
      return never;
    }
  }
}
