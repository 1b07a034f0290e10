/**
 * Creating fleet operations from validated requests, inside the caller's transaction — the
 * same functions serve the API and the scheduler, so a scheduled run creates exactly what
 * the equivalent request would. Nothing is sent here: a new batch or broadcast is PENDING
 * until the fleet driver steps it with `start` (at once after the commit; the periodic
 * pass starts any it missed).
 */
import { insertNewBatch, insertNewBroadcast, type BatchCommandSpec } from '../../actors/index.js';
import {
  findClearPan,
  findMissingDevices,
  type BatchRecord,
  type BroadcastRecord,
  type CommandActor,
  type StoreHandle,
  type TemplateRecord,
} from '../../runtime/index.js';
import { gateFleetCommands } from '../governance/commandGate.js';
import type { CreateCommand } from '../link/commandTypes.js';
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

/** What a template application created. */
export type Applied =
  { kind: 'batch'; batch: BatchRecord } | { kind: 'broadcast'; broadcast: BroadcastRecord };

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

const specOf = (c: CreateCommand): BatchCommandSpec => ({
  command_type: c.command_type,
  payload: c.payload,
  max_retries: c.max_retries,
  ...(c.expires_in_seconds !== undefined ? { expires_in_seconds: c.expires_in_seconds } : {}),
});

/**
 * Create a batch. With `requireDevices`, unknown devices are a 422 UNKNOWN_DEVICES (the
 * API); a scheduled run leaves them to fail as items instead.
 */
export async function createBatch(
  h: StoreHandle,
  request: BatchRequest,
  actor: CommandActor,
  now: Date,
  requireDevices = true,
): Promise<BatchRecord> {
  refuseClearPan(request.commands);
  if (requireDevices) {
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
  await gateFleetCommands(
    h,
    { commands: request.commands, deviceIds: request.deviceIds, pathOf: (i) => `$.commands[${i}]` },
    actor,
    now,
  );
  return insertNewBatch(
    h,
    {
      name: request.name,
      mode: request.mode,
      stopOnFailure: request.stopOnFailure,
      commands: request.commands.map(specOf),
      deviceIds: request.deviceIds,
    },
    actor,
    now,
  );
}

/** Create a broadcast (its devices are picked phase by phase when it runs). */
export async function createBroadcast(
  h: StoreHandle,
  request: BroadcastRequest,
  actor: CommandActor,
  now: Date,
): Promise<BroadcastRecord> {
  refuseClearPan([request.command]);
  // devices are picked phase by phase: every policy that may cover them applies
  await gateFleetCommands(
    h,
    { commands: [request.command], deviceIds: 'any', pathOf: () => '$.command' },
    actor,
    now,
  );
  return insertNewBroadcast(
    h,
    {
      commandType: request.command.command_type,
      payload: request.command.payload,
      maxRetries: request.command.max_retries,
      expiresInSeconds: request.command.expires_in_seconds ?? DEFAULT_BROADCAST_COMMAND_TTL_SECONDS,
      target: request.target,
      phases: request.rollout.phases,
      waitSeconds: request.rollout.wait_seconds,
      failureThreshold: request.failureThreshold,
    },
    actor,
    now,
  );
}

/**
 * Render `template` with `values` (422 with paths when they do not fit) and create what
 * `target` asks for: a SEQUENTIAL batch for one device, a batch, or a broadcast (which
 * takes exactly one command).
 */
export async function applyTemplate(
  h: StoreHandle,
  template: TemplateRecord,
  values: Record<string, unknown>,
  target: ApplyTarget,
  actor: CommandActor,
  now: Date,
  requireDevices = true,
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
      return {
        kind: 'batch',
        batch: await createBatch(
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
          requireDevices,
        ),
      };
    case 'batch':
      return {
        kind: 'batch',
        batch: await createBatch(
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
          requireDevices,
        ),
      };
    case 'broadcast': {
      const [command, ...more] = rendered.commands;
      if (!command || more.length > 0)
        throw new Problem(
          422,
          'TEMPLATE_NOT_BROADCASTABLE',
          `a broadcast sends one command; template ${name} has ${rendered.commands.length}`,
        );
      return {
        kind: 'broadcast',
        broadcast: await createBroadcast(
          h,
          {
            command,
            target: target.target,
            rollout: target.rollout,
            failureThreshold: target.failure_threshold ?? null,
          },
          actor,
          now,
        ),
      };
    }
    default: {
      const never: never = target;
      return never;
    }
  }
}
