/**
 * The command scheduler: fire ACTIVE schedules whose `next_run_at` has come. One pass:
 *
 * 1. Outside its maintenance window a schedule does not fire: its run is deferred to the
 *    window's next opening (recorded as a SKIPPED execution with `deferred_to`).
 * 2. Otherwise the run is claimed — `next_run_at` moved to the next cron tick after now
 *    (COMPLETED for a one-time schedule) only if it still holds the tick this gateway read
 *    — and performed, in one transaction: what it creates (a batch or a broadcast, or a
 *    template application) commits with the claim and its SUCCEEDED execution row. So a
 *    tick fires once however many gateways run this, and a crash leaves it unfired rather
 *    than half-fired.
 * 3. A run whose commands an authorization policy holds for approval creates nothing but
 *    the approval (governance/heldFleetOperations.ts), asked in the name of the schedule's
 *    creator — who therefore cannot approve it — for exactly what the run would have
 *    created: a batch (a COMMAND target is one PARALLEL batch to its devices, so one
 *    approval covers the run) or a broadcast. Its execution is SUCCEEDED (the run did what
 *    it could: ask) with `held: true`, the `approval_id` and the reserved `batch_id` /
 *    `broadcast_id`; the batch or broadcast exists once the approval is granted, created by
 *    the schedule as the run would have, and never if it is rejected or expires.
 * 4. A run that cannot be performed (a template deleted or no longer fitting its
 *    variables, …) still moves the schedule on, with a FAILED execution saying why.
 *
 * Ticks missed while no gateway ran are coalesced into one run (`missed_ticks` in its
 * result): a fleet should get one firmware push after an outage, not ten.
 */
import { randomUUID } from 'node:crypto';
import type { BatchStep } from './batchHost.js';
import type { BroadcastStep } from './broadcastHost.js';
import { toError, type CloudHandle } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { claimScheduleRun } from './store/commandSchedules/claimScheduleRun.js';
import { type CommandScheduleRecord } from './store/commandSchedules/commandSchedule.js';
import { listDueCommandSchedules } from './store/commandSchedules/listCommandSchedules.js';
import { insertScheduleExecution } from './store/commandSchedules/scheduleExecutions.js';
import { getTemplate } from './store/templates/getTemplate.js';
import type { GatewayContext } from '../context.js';
import type { DefinitionSigner } from '../link/signDefinitions.js';
import { Problem } from '../problem.js';
import {
  countCronTicks,
  insideWindow,
  nextCronTick,
  nextWindowOpening,
  type MaintenanceWindow,
} from './calendar.js';
import {
  applyTemplate,
  appliedIds,
  createBatch,
  createBroadcast,
  type Applied,
  type CreateOptions,
} from './create.js';
import { scheduleTargetSchema, type ScheduleTarget } from './schemas.js';

/** What one scheduler pass did. */
export interface ScheduleReport {
  fired: number;
  deferred: number;
  failed: number;
}

/** What the scheduler needs besides the context. */
export interface SchedulerDeps {
  now: Date;
  /** Start a batch a run created (after its commit). */
  startBatch(batchId: string, actor: CommandActor): Promise<BatchStep | undefined>;
  /** Start a broadcast a run created (after its commit). */
  startBroadcast(broadcastId: string, actor: CommandActor): Promise<BroadcastStep | undefined>;
}

/** The actor of what a schedule creates. */
export function scheduleActor(schedule: CommandScheduleRecord): CommandActor {
  return { actor: `schedule:${schedule.name}`, role: 'system' };
}

/** Where a schedule goes after firing at `now`. */
export function nextRunAfter(schedule: CommandScheduleRecord, now: Date): Date | null {
  if (schedule.scheduleType !== 'CRON' || !schedule.cronExpression) return null;
  return nextCronTick(schedule.cronExpression, schedule.timezone, now);
}

async function perform(
  h: CloudHandle,
  keys: DefinitionSigner,
  schedule: CommandScheduleRecord,
  actor: CommandActor,
  scheduledFor: Date,
  now: Date,
): Promise<Applied> {
  const parsed = scheduleTargetSchema.safeParse(schedule.target);
  if (!parsed.success)
    throw new Problem(422, 'SCHEDULE_TARGET_INVALID', 'the stored target no longer validates');
  const target: ScheduleTarget = parsed.data;
  const options: CreateOptions = {
    keys,
    requireDevices: false,
    run: {
      scheduleId: schedule.scheduleId,
      name: schedule.name,
      scheduledFor,
      createdBy: schedule.createdBy,
    },
  };
  switch (target.kind) {
    case 'COMMAND':
      return createBatch(
        h,
        {
          name: `schedule ${schedule.name}`,
          mode: 'PARALLEL',
          stopOnFailure: false,
          deviceIds: target.device_ids,
          commands: [target.command],
        },
        actor,
        now,
        options,
      );
    case 'BROADCAST':
      return createBroadcast(
        h,
        {
          command: target.command,
          target: target.target,
          rollout: target.rollout,
          failureThreshold: target.failure_threshold ?? null,
        },
        actor,
        now,
        options,
      );
    case 'TEMPLATE': {
      const template = await getTemplate(h, target.template_id);
      if (!template)
        throw new Problem(
          422,
          'TEMPLATE_NOT_FOUND',
          `template ${target.template_id} no longer exists`,
        );
      return applyTemplate(h, template, target.variables, target.target, actor, now, options);
    }
    default: {
      const never: never = target;
      return never;
    }
  }
}

async function fireOne(
  ctx: GatewayContext,
  schedule: CommandScheduleRecord,
  deps: SchedulerDeps,
): Promise<'fired' | 'deferred' | 'failed' | 'lost'> {
  const { now } = deps;
  const expected = schedule.nextRunAt!;
  const window = schedule.maintenanceWindow as MaintenanceWindow | null;
  if (window && !insideWindow(now, window, schedule.timezone)) {
    const opening = nextWindowOpening(now, window, schedule.timezone);
    const claimed = await ctx.store.transaction(async (tx) => {
      if (
        !(await claimScheduleRun(
          tx,
          schedule.scheduleId,
          expected,
          { nextRunAt: opening, status: opening ? 'ACTIVE' : 'COMPLETED', lastRunAt: null },
          now,
        ))
      )
        return false;
      await insertScheduleExecution(tx, {
        executionId: randomUUID(),
        scheduleId: schedule.scheduleId,
        scheduledFor: expected,
        startedAt: now,
        finishedAt: now,
        status: 'SKIPPED',
        result: {
          reason: 'outside maintenance window',
          deferred_to: opening?.toISOString() ?? null,
        },
        error: null,
      });
      return true;
    });
    return claimed ? 'deferred' : 'lost';
  }

  const next = nextRunAfter(schedule, now);
  const advance = {
    nextRunAt: next,
    status: next ? ('ACTIVE' as const) : ('COMPLETED' as const),
    lastRunAt: now,
  };
  const missed =
    schedule.scheduleType === 'CRON' && schedule.cronExpression
      ? countCronTicks(schedule.cronExpression, schedule.timezone, expected, now)
      : 0;
  const actor = scheduleActor(schedule);
  try {
    const applied = await ctx.store.transaction(async (tx) => {
      if (!(await claimScheduleRun(tx, schedule.scheduleId, expected, advance, now)))
        return undefined;
      const created = await perform(tx, ctx.keys, schedule, actor, expected, now);
      const { approvalId, ...ids } = appliedIds(created);
      const held = approvalId !== undefined ? { held: true, approval_id: approvalId } : {};
      await insertScheduleExecution(tx, {
        executionId: randomUUID(),
        scheduleId: schedule.scheduleId,
        scheduledFor: expected,
        startedAt: now,
        finishedAt: now,
        status: 'SUCCEEDED',
        result: {
          ...(ids.batchId !== undefined ? { batch_id: ids.batchId } : {}),
          ...(ids.broadcastId !== undefined ? { broadcast_id: ids.broadcastId } : {}),
          ...held,
          missed_ticks: missed,
        },
        error: null,
      });
      await appendCommandAudit(
        tx,
        actor,
        [
          {
            event: 'SCHEDULE_FIRED',
            ...ids,
            details: {
              schedule_id: schedule.scheduleId,
              scheduled_for: expected.toISOString(),
              missed_ticks: missed,
              ...held,
            },
          },
        ],
        now,
      );
      return created;
    });
    if (!applied) return 'lost';
    // a held run has nothing to start: its approval's release starts what it creates
    if (applied.kind === 'batch') await deps.startBatch(applied.batch.batchId, actor);
    else if (applied.kind === 'broadcast')
      await deps.startBroadcast(applied.broadcast.broadcastId, actor);
    return 'fired';
  } catch (error) {
    // the run could not be performed: move on and say why (a problem's message is meant
    // for callers; anything else is reported by its code only)
    const message =
      error instanceof Problem
        ? `${error.code}: ${error.message}`
        : `INTERNAL: ${toError(error).name}`;
    if (!(error instanceof Problem))
      ctx.app.log.error({ err: error, schedule_id: schedule.scheduleId }, 'a scheduled run failed');
    const recorded = await ctx.store.transaction(async (tx) => {
      if (!(await claimScheduleRun(tx, schedule.scheduleId, expected, advance, now))) return false;
      await insertScheduleExecution(tx, {
        executionId: randomUUID(),
        scheduleId: schedule.scheduleId,
        scheduledFor: expected,
        startedAt: now,
        finishedAt: now,
        status: 'FAILED',
        result: { missed_ticks: missed },
        error: message.slice(0, 2000),
      });
      return true;
    });
    return recorded ? 'failed' : 'lost';
  }
}

/** Fire every due schedule once (see the module comment). */
export async function fireDueSchedules(
  ctx: GatewayContext,
  deps: SchedulerDeps,
): Promise<ScheduleReport> {
  const report: ScheduleReport = { fired: 0, deferred: 0, failed: 0 };
  for (const schedule of await listDueCommandSchedules(ctx.store, deps.now)) {
    const outcome = await fireOne(ctx, schedule, deps);
    if (outcome !== 'lost') report[outcome]++;
  }
  return report;
}
