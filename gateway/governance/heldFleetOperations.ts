/**
 * Fleet operations held for approval. A command batch or a broadcast (from the API, a
 * template application or a schedule's run) whose commands a policy holds is not created at
 * all — no command_batches / command_broadcasts row, nothing the fleet driver could start,
 * no device_commands — only its approval, carrying the validated request and the batch or
 * broadcast id reserved for it, so the request's audit rows and the operation's share one id.
 *
 * When the approval is granted it is created PENDING with that id in the decision's
 * transaction, as created by its requester — or, for a schedule's run, by the schedule, as
 * the run would have created it — and started after the commit like one created through the
 * API (heldRequests.ts); should starting fail, the fleet driver's periodic pass starts every
 * PENDING batch and broadcast. Command lifetimes count from the release, not the request.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { insertNewBatch, type BatchSpec } from '../fleet/batchHost.js';
import { insertNewBroadcast, type BroadcastSpec } from '../fleet/broadcastHost.js';
import { RISK_LEVELS, type RiskLevel, type CloudHandle } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { BATCH_EXECUTION_MODES, type BatchRecord } from '../fleet/store/batches/batch.js';
import { type BroadcastRecord } from '../fleet/store/broadcasts/broadcast.js';
import { type ApprovalRecord } from './store/approvals/index.js';
import { targetFilterSchema } from '../fleet/schemas.js';
import { canonicalCommandType } from './commandRisk.js';
import type { ResolvedCommand } from './commandVersions.js';
import type { ApprovalTerms } from './policies.js';
import { heldTerms, heldTermsShape, requestApproval } from './requestApproval.js';

/** One command of a held batch or broadcast, with the version it was checked against. */
const heldFleetCommand = z.object({
  command_type: z.string(),
  payload: z.unknown(),
  max_retries: z.number().int(),
  /** From each command's release; null: until delivered and acked. */
  expires_in_seconds: z.number().int().nullable(),
  command_version: z.string().nullable(),
  risk_level: z.string(),
});

/** The schedule whose run asked (absent when an operator asked). */
const heldScheduleRun = z.object({
  schedule_id: z.uuid(),
  name: z.string(),
  scheduled_for: z.string(),
  /** The run's actor: what the release creates is created by it, as the run would have. */
  actor: z.string(),
});

/** The request a command batch approval holds (command_approvals.command_request). */
export const heldBatchSchema = z.object({
  kind: z.literal('command_batch'),
  batch_id: z.uuid(),
  name: z.string().nullable(),
  execution_mode: z.enum(BATCH_EXECUTION_MODES),
  stop_on_failure: z.boolean(),
  device_ids: z.array(z.string()).min(1),
  commands: z.array(heldFleetCommand).min(1),
  ...heldTermsShape,
  schedule: heldScheduleRun.optional(),
});
/** A held command batch. */
export type HeldBatch = z.output<typeof heldBatchSchema>;

/** The request a broadcast approval holds (command_approvals.command_request). */
export const heldBroadcastSchema = z.object({
  kind: z.literal('command_broadcast'),
  broadcast_id: z.uuid(),
  command: heldFleetCommand,
  target: targetFilterSchema,
  rollout: z.object({ phases: z.array(z.number()).min(1), wait_seconds: z.number().int() }),
  failure_threshold: z.number().nullable(),
  ...heldTermsShape,
  schedule: heldScheduleRun.optional(),
});
/** A held broadcast. */
export type HeldBroadcast = z.output<typeof heldBroadcastSchema>;

/** A schedule's run asking for approval. */
export interface ScheduleRun {
  scheduleId: string;
  name: string;
  scheduledFor: Date;
  /** The schedule's creator: the requester, who may not approve the run (null: unknown). */
  createdBy: string | null;
}

/** What is held, how it was checked, and on what terms. */
interface HoldInput<S> {
  spec: S;
  /** Version and risk of each command, in order. */
  resolved: readonly ResolvedCommand[];
  terms: ApprovalTerms;
  /** Set when a schedule's run asks. */
  run?: ScheduleRun | undefined;
}

const highestRisk = (resolved: readonly ResolvedCommand[]): RiskLevel =>
  resolved.reduce<RiskLevel>(
    (top, r) => (RISK_LEVELS.indexOf(r.risk) > RISK_LEVELS.indexOf(top) ? r.risk : top),
    'LOW',
  );

const heldCommandOf = (
  c: { command_type: string; payload: unknown; max_retries: number },
  expiresInSeconds: number | null,
  resolved: ResolvedCommand | undefined,
) => ({
  command_type: c.command_type,
  payload: c.payload,
  max_retries: c.max_retries,
  expires_in_seconds: expiresInSeconds,
  command_version: resolved?.version ?? null,
  risk_level: resolved?.risk ?? 'LOW',
});

/** Who asks, and the audit details saying which run, for a request `actor` makes. */
function requester(run: ScheduleRun | undefined, actor: CommandActor) {
  if (!run) return { requestedBy: actor.actor, schedule: undefined, details: {} };
  return {
    requestedBy: run.createdBy ?? actor.actor,
    schedule: {
      schedule_id: run.scheduleId,
      name: run.name,
      scheduled_for: run.scheduledFor.toISOString(),
      actor: actor.actor,
    },
    details: { schedule_id: run.scheduleId, scheduled_for: run.scheduledFor.toISOString() },
  };
}

/** Hold batch `spec` under `terms`; returns the approval (PENDING). */
export function holdBatch(
  tx: CloudHandle,
  input: HoldInput<BatchSpec>,
  actor: CommandActor,
  now: Date,
): Promise<ApprovalRecord> {
  const { spec, resolved, terms } = input;
  const risk = highestRisk(resolved);
  const asker = requester(input.run, actor);
  const held: HeldBatch = {
    kind: 'command_batch',
    batch_id: randomUUID(),
    name: spec.name,
    execution_mode: spec.mode,
    stop_on_failure: spec.stopOnFailure,
    device_ids: [...spec.deviceIds],
    commands: spec.commands.map((c, i) =>
      heldCommandOf(c, c.expires_in_seconds ?? null, resolved[i]),
    ),
    ...heldTerms(terms, risk, actor.role),
    ...(asker.schedule ? { schedule: asker.schedule } : {}),
  };
  const types = [...new Set(spec.commands.map((c) => canonicalCommandType(c.command_type)))];
  return requestApproval(
    tx,
    {
      held,
      terms,
      requestedBy: asker.requestedBy,
      commandType: types.length === 1 ? types[0]! : null,
      risk,
      details: {
        batch_id: held.batch_id,
        command_types: types,
        device_count: held.device_ids.length,
        ...asker.details,
      },
    },
    actor,
    now,
  );
}

/** Hold broadcast `spec` under `terms`; returns the approval (PENDING). */
export function holdBroadcast(
  tx: CloudHandle,
  input: HoldInput<BroadcastSpec> & { target: HeldBroadcast['target'] },
  actor: CommandActor,
  now: Date,
): Promise<ApprovalRecord> {
  const { spec, resolved, terms } = input;
  const risk = highestRisk(resolved);
  const asker = requester(input.run, actor);
  const held: HeldBroadcast = {
    kind: 'command_broadcast',
    broadcast_id: randomUUID(),
    command: heldCommandOf(
      { command_type: spec.commandType, payload: spec.payload, max_retries: spec.maxRetries },
      spec.expiresInSeconds,
      resolved[0],
    ),
    target: input.target,
    rollout: { phases: spec.phases, wait_seconds: spec.waitSeconds },
    failure_threshold: spec.failureThreshold,
    ...heldTerms(terms, risk, actor.role),
    ...(asker.schedule ? { schedule: asker.schedule } : {}),
  };
  return requestApproval(
    tx,
    {
      held,
      terms,
      requestedBy: asker.requestedBy,
      commandType: spec.commandType,
      risk,
      details: { broadcast_id: held.broadcast_id, ...asker.details },
    },
    actor,
    now,
  );
}

/**
 * The actor a release creates as: the requester with the role it asked in — or the
 * schedule, for a schedule's run.
 */
export const releaseActor = (
  approval: ApprovalRecord,
  held: HeldBatch | HeldBroadcast,
): CommandActor => ({
  actor: held.schedule?.actor ?? approval.requestedBy,
  role: held.requested_role,
});

/** Create the held batch (PENDING, with its reserved id); inside the decision's transaction. */
export function releaseBatch(
  tx: CloudHandle,
  held: HeldBatch,
  actor: CommandActor,
  now: Date,
): Promise<BatchRecord> {
  return insertNewBatch(
    tx,
    {
      batchId: held.batch_id,
      name: held.name,
      mode: held.execution_mode,
      stopOnFailure: held.stop_on_failure,
      deviceIds: held.device_ids,
      commands: held.commands.map((c) => ({
        command_type: c.command_type,
        payload: c.payload,
        max_retries: c.max_retries,
        ...(c.expires_in_seconds !== null ? { expires_in_seconds: c.expires_in_seconds } : {}),
        ...(c.command_version !== null ? { command_version: c.command_version } : {}),
      })),
    },
    actor,
    now,
  );
}

/** Create the held broadcast (PENDING, with its reserved id); inside the decision's transaction. */
export function releaseBroadcast(
  tx: CloudHandle,
  held: HeldBroadcast,
  actor: CommandActor,
  now: Date,
): Promise<BroadcastRecord> {
  return insertNewBroadcast(
    tx,
    {
      broadcastId: held.broadcast_id,
      commandType: held.command.command_type,
      payload: held.command.payload,
      maxRetries: held.command.max_retries,
      expiresInSeconds: held.command.expires_in_seconds,
      target: held.target,
      phases: held.rollout.phases,
      waitSeconds: held.rollout.wait_seconds,
      failureThreshold: held.failure_threshold,
      commandVersion: held.command.command_version,
    },
    actor,
    now,
  );
}
