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
 * 3. A run that cannot be performed (a template deleted or no longer fitting its
 *    variables, …) still moves the schedule on, with a FAILED execution saying why.
 *
 * Ticks missed while no gateway ran are coalesced into one run (`missed_ticks` in its
 * result): a fleet should get one firmware push after an outage, not ten.
 */
import { randomUUID } from 'node:crypto';
import type { BatchStep, BroadcastStep } from '../../actors/index.js';
import {
  appendCommandAudit,
  claimScheduleRun,
  getTemplate,
  insertScheduleExecution,
  listDueCommandSchedules,
  toError,
  type CommandActor,
  type CommandScheduleRecord,
  type StoreHandle,
} from '../../runtime/index.js';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import {
  countCronTicks,
  insideWindow,
  nextCronTick,
  nextWindowOpening,
  type MaintenanceWindow,
} from './calendar.js';
import { applyTemplate, createBatch, createBroadcast, type Applied } from './create.js';
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
  h: StoreHandle,
  schedule: CommandScheduleRecord,
  actor: CommandActor,
  now: Date,
): Promise<Applied> {
  const parsed = scheduleTargetSchema.safeParse(schedule.target);
  if (!parsed.success)
    throw new Problem(422, 'SCHEDULE_TARGET_INVALID', 'the stored target no longer validates');
  const target: ScheduleTarget = parsed.data;
  switch (target.kind) {
    case 'COMMAND':
      return {
        kind: 'batch',
        batch: await createBatch(
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
          false,
        ),
      };
    case 'BROADCAST':
      return {
        kind: 'broadcast',
        broadcast: await createBroadcast(
          h,
          {
            command: target.command,
            target: target.target,
            rollout: target.rollout,
            failureThreshold: target.failure_threshold ?? null,
          },
          actor,
          now,
        ),
      };
    case 'TEMPLATE': {
      const template = await getTemplate(h, target.template_id);
      if (!template)
        throw new Problem(
          422,
          'TEMPLATE_NOT_FOUND',
          `template ${target.template_id} no longer exists`,
        );
      return applyTemplate(h, template, target.variables, target.target, actor, now, false);
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
      const created = await perform(tx, schedule, actor, now);
      const result =
        created.kind === 'batch'
          ? { batch_id: created.batch.batchId }
          : { broadcast_id: created.broadcast.broadcastId };
      await insertScheduleExecution(tx, {
        executionId: randomUUID(),
        scheduleId: schedule.scheduleId,
        scheduledFor: expected,
        startedAt: now,
        finishedAt: now,
        status: 'SUCCEEDED',
        result: { ...result, missed_ticks: missed },
        error: null,
      });
      await appendCommandAudit(
        tx,
        actor,
        [
          {
            event: 'SCHEDULE_FIRED',
            ...(created.kind === 'batch'
              ? { batchId: created.batch.batchId }
              : { broadcastId: created.broadcast.broadcastId }),
            details: {
              schedule_id: schedule.scheduleId,
              scheduled_for: expected.toISOString(),
              missed_ticks: missed,
            },
          },
        ],
        now,
      );
      return created;
    });
    if (!applied) return 'lost';
    if (applied.kind === 'batch') await deps.startBatch(applied.batch.batchId, actor);
    else await deps.startBroadcast(applied.broadcast.broadcastId, actor);
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
