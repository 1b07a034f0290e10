/**
 * Running ASYNC and PARALLEL tasks: claim due tasks from the `tasks` table, run each task's
 * function through the runtime's executor, and record the outcome. The completion of a
 * group's last task merges the results in declaration order (with the step's merge rules)
 * and resumes the workflow — in the same transaction that records the completion, under a
 * lock on the group's rows, so a result is applied exactly once however many workers finish
 * at the same moment (taskOutcomes.ts).
 *
 * A worker runs up to `batch` task functions at once and holds up to `batch + prefetch`
 * claimed tasks, each from its claim until its outcome is durable; freed places are refilled
 * at once rather than after the whole batch, on PostgreSQL by the very statement that records
 * the outcomes. A claim fills every free place: a batch costs a fixed number of statements,
 * so the larger the batches, the less each task pays. With `prefetch`, tasks claimed beyond
 * the running ones wait in the worker (a local queue) and start as soon as a function
 * returns, while the statement that records the finished ones and claims more is under way:
 * the worker and the database work at the same time instead of taking turns.
 *
 * A task's function gets the state snapshot taken at dispatch; what it returns, and what it
 * changed in place, is its result. Failures are retried with exponential backoff up to the
 * task's `max_attempts`; a live worker renews the leases of the tasks it runs with its
 * heartbeat and gives up claims it lost track of (serve.ts); a worker that dies loses its
 * tasks when the maintenance pass declares it dead (its heartbeat older than the zombie
 * threshold), or at the latest when their lease (`leaseMs`) runs out; then the next claim
 * of any worker takes the task over.
 */
import {
  claimTasks,
  failUnfinishedTasks,
  invokeStepFunction,
  listTaskGroup,
  lockTaskGroup,
  noEffects,
  stepAbort,
  StepError,
  toError,
  withSignalAndLog,
  type ClaimedTask,
  type JsonObject,
  type StepAbort,
  type StepContext,
  type TaskClaim,
  type TaskFinish,
  type TaskOutcome,
} from '../../runtime/index.js';
import type { Internals } from './internals.js';
import {
  createOutcomeQueue,
  type OutcomeQueue,
  type Refill,
  settleGroups,
} from './taskOutcomes.js';

/** Options of a task-running loop. */
export interface TaskRunOptions {
  /** Task functions running at once (default 8). */
  batch?: number;
  /**
   * Tasks claimed ahead, beyond the running ones, to start as functions return (default 0).
   * They are held (their leases renewed) while they wait, so another worker cannot take
   * them: worth it for short tasks with a backlog, not for long ones.
   */
  prefetch?: number;
  /** How long a claim holds before another worker may take the task over (default: the runtime's `taskLeaseMs`). */
  leaseMs?: number;
  /** Serve only these data regions (and tasks without a region). */
  regions?: readonly string[];
  /** Claim no new tasks after this moment (epoch ms), so a busy worker still gets to its maintenance. */
  stopAfter?: number;
}

const isEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What a task produced: the top-level keys it added or changed (in place or by returning). */
function changedKeys(before: JsonObject, after: JsonObject): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(after))
    if (!isEqual(before[key], value)) result[key] = value;
  return result;
}

/** Exponential backoff: 1 s, 2 s, 4 s, … capped at 5 minutes. */
export const taskBackoffMs = (attempt: number) =>
  Math.min(1000 * 2 ** Math.max(0, attempt - 1), 300_000);

/** What `task` ended with, as the row and audit event that record it. */
function outcomeOf(
  internals: Internals,
  task: ClaimedTask,
  finish: TaskFinish,
  logs: ReturnType<typeof noEffects>['logs'],
): TaskOutcome {
  const now = internals.clock.now();
  const eventData: Record<string, unknown> = {
    task: task.context.taskName ?? task.stepName,
    task_id: task.id,
    attempt: task.attempts,
    status: finish.status,
  };
  if (finish.status !== 'COMPLETED') eventData.error = finish.error;
  return {
    taskId: task.id,
    workflowId: task.workflowId,
    group: task.parallelGroup ?? task.id,
    finish,
    audit: {
      workflowId: task.workflowId,
      eventType: finish.status === 'COMPLETED' ? 'TASK_COMPLETED' : 'STEP_FAILED',
      stepName: task.stepName,
      eventData,
    },
    logs: logs.map((l) => ({ workflowId: task.workflowId, ...l, at: now })),
  };
}

/** A claimed task's run: the abort of its context, and whether its function has returned. */
interface TaskRun {
  abort: StepAbort;
  returned: boolean;
  /** Another worker's now: not to be started if it is still waiting. */
  lost: boolean;
  /** Called once when the function has returned (or thrown). */
  onReturned: () => void;
}

/**
 * Run one claimed task, its context's signal that of `run.abort`, and hand its outcome to
 * `outcomes`; resolves once it is recorded (or found lost).
 */
async function runClaimedTask(
  internals: Internals,
  task: ClaimedTask,
  outcomes: OutcomeQueue,
  run: TaskRun,
): Promise<void> {
  const effects = noEffects();
  const name = typeof task.context.taskName === 'string' ? task.context.taskName : task.stepName;
  const context: StepContext = withSignalAndLog(
    {
      workflowId: task.workflowId,
      workflowType: typeof task.context.workflowType === 'string' ? task.context.workflowType : '',
      stepName: task.stepName,
      taskName: name,
      attempt: task.attempts,
      idempotencyKey:
        typeof task.context.idempotencyKey === 'string' ? task.context.idempotencyKey : task.id,
      secrets: internals.secrets,
    },
    effects,
    task.stepName,
    run.abort,
  );
  let finish: TaskFinish;
  try {
    const result = await invokeStepFunction(
      internals.executor,
      task.functionPath,
      task.state,
      context,
    );
    if (result.kind === 'returned') {
      const changed = changedKeys(task.state, result.state);
      // a result the state guard refuses is never stored: the task fails, without a retry
      const refused = internals.stateGuard?.(changed, task.stepName);
      finish = refused
        ? { status: 'FAILED', error: `${refused.code}: ${refused.message}` }
        : { status: 'COMPLETED', result: changed };
    } else if (result.kind === 'directive') {
      finish = {
        status: 'FAILED',
        error: `${task.functionPath}: ${result.directive.kind} directives are not supported in ASYNC or PARALLEL tasks`,
      };
    } else if (task.attempts < task.maxAttempts) {
      finish = {
        status: 'RETRY',
        error: result.error.message,
        runAfter: new Date(internals.clock.now().getTime() + taskBackoffMs(task.attempts)),
      };
    } else finish = { status: 'FAILED', error: result.error.message };
  } catch (error) {
    finish = { status: 'FAILED', error: toError(error).message };
  } finally {
    run.returned = true;
    run.onReturned();
  }
  await outcomes.record({ task, outcome: outcomeOf(internals, task, finish, effects.logs) });
}

/** Claim and run due tasks until none is left; returns how many ran. */
export async function drainTasks(
  internals: Internals,
  options: TaskRunOptions = {},
): Promise<number> {
  const slots = Math.max(1, Math.floor(options.batch ?? 8));
  const places = slots + Math.max(0, Math.floor(options.prefetch ?? 0));
  let held = 0; // tasks claimed and not yet recorded (or dropped as lost)
  let executing = 0; // of those, tasks whose function is running
  let claiming = 0; // places promised to claims under way
  let ran = 0;
  const waiting: { task: ClaimedTask; run: TaskRun }[] = [];
  let failure: { error: unknown } | undefined;
  let placeFreed: (() => void) | undefined;
  const stopping = () =>
    failure !== undefined || (options.stopAfter !== undefined && Date.now() >= options.stopAfter);
  const claimOf = (limit: number): TaskClaim => ({
    workerId: internals.workerId,
    limit,
    leaseMs: options.leaseMs ?? internals.taskLeaseMs,
    now: internals.clock.now(),
    ...(options.regions ? { regions: options.regions } : {}),
  });
  const refill: Refill = {
    claim(freed) {
      const limit = places - held - claiming + freed;
      if (stopping() || limit <= 0) return undefined;
      claiming += limit;
      return claimOf(limit);
    },
    claimed(tasks, limit) {
      claiming -= limit;
      for (const task of tasks) hold(task);
      startWaiting();
    },
  };
  const outcomes = createOutcomeQueue(internals, refill);
  const release = (task: ClaimedTask) => {
    internals.heldTasks.delete(task.id);
    held--;
    placeFreed?.();
  };
  /** A claimed task: held (its lease renewed by the heartbeat) until it starts and is recorded. */
  function hold(task: ClaimedTask) {
    held++;
    const run: TaskRun = {
      abort: stepAbort(),
      returned: false,
      lost: false,
      onReturned: () => {
        executing--;
        startWaiting();
      },
    };
    internals.heldTasks.set(task.id, {
      lost: () => {
        run.lost = true;
        // a body that has returned is not told: a listener it left must not fire after it
        if (run.returned) return;
        run.abort.abort(
          new StepError(
            'TASK_LOST',
            task.stepName,
            `task ${task.id} is no longer this worker's: its lease ran out and another worker took it over, or its step ended without it; what it returns is not recorded`,
            { details: { task: task.id } },
          ),
        );
      },
    });
    waiting.push({ task, run });
  }
  /** Start waiting tasks while functions may run; a task lost while it waited is dropped. */
  function startWaiting() {
    while (executing < slots && waiting.length > 0) {
      const { task, run } = waiting.shift()!;
      if (run.lost) {
        release(task);
        continue;
      }
      executing++;
      ran++;
      runClaimedTask(internals, task, outcomes, run)
        .catch((error: unknown) => {
          failure ??= { error };
        })
        .finally(() => {
          // a run that failed before its function returned still gives its place back
          if (!run.returned) {
            run.returned = true;
            run.onReturned();
          }
          release(task);
        });
    }
  }
  for (;;) {
    const free = places - held - claiming;
    if (!stopping() && free > 0) {
      claiming += free;
      let claimed: ClaimedTask[] = [];
      try {
        claimed = await claimTasks(internals.store, claimOf(free));
      } catch (error) {
        failure ??= { error };
      } finally {
        claiming -= free;
      }
      for (const task of claimed) hold(task);
      startWaiting();
      // a full claim: more may be due, fill the free places; a short one: the queue is empty for now
      if (claimed.length === free) continue;
    }
    if (held === 0 && claiming === 0) break;
    await new Promise<void>((resolve) => (placeFreed = resolve));
    placeFreed = undefined;
  }
  if (failure) throw failure.error;
  return ran;
}

/**
 * New tasks were queued by this runtime: if `serve` runs, wake its loop; otherwise, when
 * the runtime runs tasks itself, make sure its one background drain loop picks them up.
 * One loop per runtime, claiming a batch at a time, bounds the work in flight: a drain per
 * dispatch would claim tasks faster than the connection pool can finish them, and their
 * leases would run out while they wait.
 */
export function kickTasks(internals: Internals, workflowId: string): void {
  if (internals.taskWake) {
    internals.taskWake();
    return;
  }
  if (!internals.runTasks) return;
  const drain = internals.taskDrain;
  if (drain.running) {
    drain.again = true;
    return;
  }
  drain.running = true;
  internals.background(workflowId, async () => {
    try {
      do {
        drain.again = false;
        await drainTasks(internals);
      } while (drain.again);
    } finally {
      drain.running = false;
    }
  });
}

/** A PARALLEL step's timeout fired: fail its unfinished tasks and settle the group. */
export async function timeOutTaskGroup(
  internals: Internals,
  workflowId: string,
  group: string,
  seconds: unknown,
): Promise<void> {
  const afters = await internals.exclusive(workflowId, () =>
    internals.store.transaction(async (tx) => {
      const now = internals.clock.now();
      await lockTaskGroup(tx, workflowId, group);
      const failed = await failUnfinishedTasks(
        tx,
        workflowId,
        group,
        `timed out after ${String(seconds)} s`,
        now,
      );
      if (failed === 0) return [];
      const members = await listTaskGroup(tx, workflowId, group);
      return settleGroups(internals, tx, [{ workflowId, group, members }], now);
    }),
  );
  for (const after of afters) after();
}
