/**
 * One maintenance pass of the cluster: recover zombie workflows, fire PARALLEL timeouts and
 * human-input deadlines, and fire due cron schedules. On PostgreSQL each job runs under its
 * own advisory lock, so one node at a time does it however many run the loop; correctness
 * does not rest on the lock alone — drives are version-checked and a cron tick starts its workflow under an
 * idempotency key, so even two schedulers never start a tick twice.
 */
import {
  advanceSchedule,
  appendAuditEvents,
  deleteHeartbeat,
  fireTimer,
  getWorkflow,
  listDueSchedules,
  listDueTimers,
  listStaleHeartbeats,
  releaseDeadWorkers,
  nextCronRun,
  takeOverHeartbeat,
  toError,
  withAdvisoryLock,
  type StoredSchedule,
} from '../../runtime/index.js';
import { workflowPosition } from '../workflow/snapshot.js';
import { driveWorkflow } from './drive.js';
import { type Internals, restoreLive } from './internals.js';
import type { StartOptions } from './createRuntime.js';
import type { JsonObject, WorkflowRecord } from '../../runtime/index.js';
import { timeOutTaskGroup } from './tasks.js';

/** Options of a maintenance pass. */
export interface MaintenanceOptions {
  /** A heartbeat older than this marks its workflow's driver as dead (default 3 × the heartbeat interval). */
  zombieAfterMs?: number;
  /** Most missed cron ticks fired after downtime, per schedule (default 10); older ones are skipped. */
  cronCatchUp?: number;
}

/** What one pass did. */
export interface MaintenanceReport {
  recovered: number;
  /** Tasks taken back from workers declared dead (cloud stores). */
  released: number;
  timeouts: number;
  scheduled: number;
}

/**
 * Declare dead the worker nodes whose heartbeat is older than `olderThanMs` and release the
 * tasks they held (their leases end now); the claim that takes a task over counts it as
 * one more attempt, as after a lease that ran out.
 */
async function releaseTasksOfDead(internals: Internals, olderThanMs: number): Promise<number> {
  const now = internals.clock.now();
  const { tasks } = await releaseDeadWorkers(
    internals.store,
    new Date(now.getTime() - olderThanMs),
    now,
  );
  return tasks;
}

type Start = (type: string, data: JsonObject, options: StartOptions) => Promise<WorkflowRecord>;

async function leader<T>(
  internals: Internals,
  job: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  const driver = internals.store.driver;
  if (driver.dialect !== 'postgres') return work();
  return withAdvisoryLock(driver.pool, `saffron:${job}`, work);
}

async function recoverZombies(internals: Internals, olderThanMs: number): Promise<number> {
  const now = internals.clock.now();
  const staleBefore = new Date(now.getTime() - olderThanMs);
  const stale = await listStaleHeartbeats(internals.store, staleBefore);
  let recovered = 0;
  for (const beat of stale) {
    const record = await getWorkflow(internals.store, beat.workflowId);
    const running =
      record &&
      (record.status === 'ACTIVE' ||
        workflowPosition(restoreLive(internals, record).live).key === 'compensating');
    if (!running) {
      await deleteHeartbeat(internals.store, beat.workflowId);
      continue;
    }
    const taken = await internals.store.transaction(async (tx) => {
      const owned = await takeOverHeartbeat(tx, {
        workflowId: beat.workflowId,
        previousWorker: beat.workerId,
        staleBefore,
        workerId: internals.workerId,
        at: now,
      });
      if (!owned) return false; // its owner refreshed it, or another scanner took it
      await appendAuditEvents(tx, [
        {
          workflowId: beat.workflowId,
          eventType: 'WORKFLOW_RECOVERED',
          stepName: beat.currentStep,
          eventData: {
            previous_worker: beat.workerId,
            last_heartbeat: beat.lastHeartbeat.toISOString(),
            worker: internals.workerId,
          },
        },
      ]);
      return true;
    });
    if (!taken) continue;
    internals.lastBeat.set(beat.workflowId, now.getTime());
    internals.background(beat.workflowId, () =>
      driveWorkflow(internals, beat.workflowId, { kind: 'continue' }),
    );
    recovered++;
  }
  return recovered;
}

/** Timer kinds the cluster's timer job fires (and a one-shot run, for its own workflow). */
export const TIMEOUT_TIMER_KINDS: readonly string[] = ['PARALLEL_TIMEOUT', 'HUMAN_INPUT_TIMEOUT'];

/**
 * Fire the due timeouts (of one workflow, with `workflowId`); how many fired here. A passed
 * human-input deadline drives its workflow in the background, or before this returns with
 * `inline` (a resume that arrives after the deadline must find it applied).
 */
export async function fireTimeouts(
  internals: Internals,
  workflowId?: string,
  inline = false,
): Promise<number> {
  const due = await listDueTimers(
    internals.store,
    TIMEOUT_TIMER_KINDS,
    internals.clock.now(),
    100,
    workflowId,
  );
  let fired = 0;
  for (const timer of due) {
    if (!(await fireTimer(internals.store, timer.id))) continue;
    if (timer.kind === 'HUMAN_INPUT_TIMEOUT' && timer.stepName) {
      const stepName = timer.stepName;
      const drive = () =>
        driveWorkflow(internals, timer.workflowId, { kind: 'deadline', stepName });
      if (inline) await drive();
      else internals.background(timer.workflowId, drive);
    } else {
      const group = typeof timer.payload.group === 'string' ? timer.payload.group : undefined;
      if (group) await timeOutTaskGroup(internals, timer.workflowId, group, timer.payload.seconds);
    }
    fired++;
  }
  return fired;
}

async function fireSchedule(
  internals: Internals,
  schedule: StoredSchedule,
  start: Start,
  catchUp: number,
): Promise<number> {
  const now = internals.clock.now();
  const expected = schedule.nextRunAt!;
  const ticks: Date[] = [];
  let tick: Date | null = expected;
  while (tick && tick.getTime() <= now.getTime()) {
    ticks.push(tick);
    tick = nextCronRun(schedule.cronExpression, tick);
  }
  const next = tick;
  const fire = ticks.slice(-catchUp);
  if (!(await advanceSchedule(internals.store, schedule.id, expected, ticks.at(-1) ?? now, next)))
    return 0;
  let started = 0;
  for (const at of fire) {
    try {
      await start(
        schedule.targetWorkflowType,
        { ...schedule.initialData, scheduled_for: at.toISOString() },
        {
          idempotencyKey: `cron:${schedule.scheduleName}:${at.toISOString()}`,
        },
      );
      started++;
    } catch (error) {
      internals.onError(
        new Error(`schedule ${schedule.scheduleName}: ${toError(error).message}`, { cause: error }),
        schedule.scheduleName,
      );
    }
  }
  return started;
}

async function fireSchedules(internals: Internals, start: Start, catchUp: number): Promise<number> {
  let started = 0;
  for (const schedule of await listDueSchedules(internals.store, internals.clock.now())) {
    started += await fireSchedule(internals, schedule, start, catchUp);
  }
  return started;
}

/** Run one maintenance pass. */
export async function maintain(
  internals: Internals,
  start: Start,
  options: MaintenanceOptions = {},
): Promise<MaintenanceReport> {
  const zombieAfterMs = options.zombieAfterMs ?? internals.heartbeatIntervalMs * 3;
  const recovered =
    (await leader(internals, 'zombies', () => recoverZombies(internals, zombieAfterMs))) ?? 0;
  const released =
    internals.store.dialect === 'sqlite'
      ? 0
      : ((await leader(internals, 'dead-workers', () =>
          releaseTasksOfDead(internals, zombieAfterMs),
        )) ?? 0);
  const timeouts = (await leader(internals, 'timers', () => fireTimeouts(internals))) ?? 0;
  const scheduled =
    (await leader(internals, 'cron', () =>
      fireSchedules(internals, start, options.cronCatchUp ?? 10),
    )) ?? 0;
  return { recovered, released, timeouts, scheduled };
}
