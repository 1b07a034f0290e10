/**
 * Running ASYNC and PARALLEL tasks: claim due tasks from the `tasks` table, run each task's
 * function through the runtime's executor, and record the outcome. The completion of a
 * group's last task merges the results in declaration order (with the step's merge rules)
 * and resumes the workflow — in the same transaction that records the completion, under a
 * lock on the group's rows, so a result is applied exactly once however many workers finish
 * at the same moment.
 *
 * A task's function gets the state snapshot taken at dispatch; what it returns, and what it
 * changed in place, is its result. Failures are retried with exponential backoff up to the
 * task's `max_attempts`; a worker that dies leaves its claim to expire (`leaseMs`), after
 * which `releaseExpiredTasks` hands the task to another worker.
 */
import {
  appendAuditEvents,
  appendStepLogs,
  claimTasks,
  failUnfinishedTasks,
  createStepLogger,
  finishTask,
  getWorkflow,
  invokeStepFunction,
  listTaskGroup,
  lockTaskGroup,
  mergeAll,
  noEffects,
  releaseExpiredTasks,
  StepError,
  toError,
  type ClaimedTask,
  type JsonObject,
  type StepContext,
  type StoreHandle,
  type TaskFinish,
} from '../../runtime/index.js';
import { wfEvents, type WorkflowEvent } from '../workflow/events.js';
import { workflowContext, workflowPosition } from '../workflow/snapshot.js';
import { writePlans } from './commit.js';
import { driveWorkflow } from './drive.js';
import { finishAudit } from './outcome.js';
import { type Internals, restoreLive } from './internals.js';
import { automateNext, buildTransition, compensationOf, isTerminal } from './plan.js';

/** Options of a task-running loop. */
export interface TaskRunOptions {
  /** Claim at most this many tasks at a time (default 8). */
  batch?: number;
  /** How long a claim holds before another worker may take the task over (default: the runtime's `taskLeaseMs`). */
  leaseMs?: number;
  /** Serve only these data regions (and tasks without a region). */
  regions?: readonly string[];
  /** Claim no new batch after this moment (epoch ms), so a busy worker still gets to its maintenance. */
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

/** Run one claimed task and record its outcome. */
export async function runClaimedTask(internals: Internals, task: ClaimedTask): Promise<void> {
  const effects = noEffects();
  const name = typeof task.context.taskName === 'string' ? task.context.taskName : task.stepName;
  const context: StepContext = {
    workflowId: task.workflowId,
    workflowType: typeof task.context.workflowType === 'string' ? task.context.workflowType : '',
    stepName: task.stepName,
    taskName: name,
    attempt: task.attempts,
    idempotencyKey:
      typeof task.context.idempotencyKey === 'string' ? task.context.idempotencyKey : task.id,
    signal: new AbortController().signal,
    secrets: internals.secrets,
    log: createStepLogger(effects, task.stepName),
  };
  let finish: TaskFinish;
  try {
    const result = await invokeStepFunction(
      internals.executor,
      task.functionPath,
      task.state,
      context,
    );
    if (result.kind === 'returned')
      finish = { status: 'COMPLETED', result: changedKeys(task.state, result.state) };
    else if (result.kind === 'directive') {
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
  }
  await completeTask(internals, task, finish, effects.logs);
}

/**
 * If every task of `group` has ended and the workflow still waits for the group, merge the
 * results and move the workflow on, inside `tx`; returns what to start after the commit.
 */
async function settleTaskGroup(
  internals: Internals,
  tx: StoreHandle,
  workflowId: string,
  group: string,
  now: Date,
): Promise<(() => void) | undefined> {
  const tasks = await listTaskGroup(tx, workflowId, group);
  if (tasks.some((t) => t.status === 'PENDING' || t.status === 'CLAIMED')) return undefined;
  const record = await getWorkflow(tx, workflowId);
  if (!record) return undefined;
  const current = restoreLive(internals, record);
  const position = workflowPosition(current.live);
  if (position.sub !== 'waitingTasks' || workflowContext(current.live).taskGroup !== group) return;
  const step = current.live.compiled.stepAt(position.key)!.step;
  const failed = tasks.filter((t) => t.status !== 'COMPLETED');
  const results = tasks.filter((t) => t.status === 'COMPLETED').map((t) => t.result ?? {});
  const options =
    step.type === 'PARALLEL'
      ? { strategy: step.merge_strategy, onConflict: step.merge_conflict_behavior }
      : {};
  let state = record.state;
  let error: StepError | undefined;
  try {
    state = mergeAll(record.state, results, options);
  } catch (cause) {
    error = new StepError('STEP_RESULT_INVALID', step.name, toError(cause).message, { cause });
  }
  const partial = step.type === 'PARALLEL' && step.allow_partial_success;
  if (!error && failed.length > 0 && !partial) {
    error = new StepError(
      'STEP_FUNCTION_FAILED',
      step.name,
      `${failed.length} of ${tasks.length} task(s) failed: ${failed.map((t) => `${t.name}: ${t.error ?? t.status}`).join('; ')}`,
      {
        details: { failed: failed.map((t) => t.name) },
      },
    );
  }
  if (!error && failed.length > 0) {
    const previous = (state.parallel_failures as JsonObject | undefined) ?? {};
    state = {
      ...state,
      parallel_failures: {
        ...previous,
        [step.name]: failed.map((t) => ({ task: t.name, error: t.error })),
      },
    };
  }
  const events: WorkflowEvent[] = error
    ? [
        wfEvents.stepFailed(step.name, {
          code: error.code,
          message: error.message,
          step: step.name,
        }),
      ]
    : [wfEvents.tasksCompleted(step.name, compensationOf(step))];
  const t = buildTransition(
    internals,
    current,
    events,
    error ? record.state : state,
    undefined,
    !error && automateNext(step, current.live),
  );
  t.plan.audit.push(
    error
      ? {
          workflowId: record.id,
          eventType: 'STEP_FAILED',
          stepName: step.name,
          eventData: { error: { code: error.code, message: error.message, step: step.name } },
        }
      : {
          workflowId: record.id,
          eventType: 'STEP_EXECUTED',
          stepName: step.name,
          eventData: { kind: step.type, tasks: tasks.length, failed: failed.length },
        },
  );
  if (step.type === 'PARALLEL' && step.timeout_seconds !== undefined)
    t.plan.settleTimers.push({ status: 'CANCELLED', stepName: step.name });
  finishAudit(t, record.id);
  await writePlans(tx, [t.plan], now);
  const advance = !error && automateNext(step, t.next);
  return () => {
    if (!internals.driveChildren && !internals.runTasks) return;
    if ((t.status === 'ACTIVE' && advance) || workflowPosition(t.next).key === 'compensating') {
      internals.background(record.id, () =>
        driveWorkflow(internals, record.id, { kind: 'continue' }),
      );
    }
    if (isTerminal(t.status) && record.parentWorkflowId) {
      const parent = record.parentWorkflowId;
      internals.background(parent, () => driveWorkflow(internals, parent, { kind: 'child-done' }));
    }
  };
}

/** Record a task's outcome and, if it was the last of its group, resume the workflow. */
async function completeTask(
  internals: Internals,
  task: ClaimedTask,
  finish: TaskFinish,
  logs: ReturnType<typeof noEffects>['logs'],
): Promise<void> {
  const group = task.parallelGroup ?? task.id;
  let after: (() => void) | undefined;
  await internals.exclusive(task.workflowId, () =>
    internals.store.transaction(async (tx) => {
      const now = internals.clock.now();
      await lockTaskGroup(tx, task.workflowId, group);
      if (!(await finishTask(tx, task.id, internals.workerId, finish, now))) return;
      await appendStepLogs(
        tx,
        logs.map((l) => ({ workflowId: task.workflowId, ...l, at: now })),
      );
      await appendAuditEvents(tx, [
        {
          workflowId: task.workflowId,
          eventType: finish.status === 'COMPLETED' ? 'TASK_COMPLETED' : 'STEP_FAILED',
          stepName: task.stepName,
          eventData: {
            task: task.context.taskName ?? task.stepName,
            task_id: task.id,
            attempt: task.attempts,
            status: finish.status,
            ...(finish.status === 'COMPLETED' ? {} : { error: finish.error }),
          },
        },
      ]);
      if (finish.status === 'RETRY') return;
      after = await settleTaskGroup(internals, tx, task.workflowId, group, now);
    }),
  );
  after?.();
}

/** Claim and run due tasks until none is left; returns how many ran. */
export async function drainTasks(
  internals: Internals,
  options: TaskRunOptions = {},
): Promise<number> {
  let ran = 0;
  for (;;) {
    await releaseExpiredTasks(internals.store, internals.clock.now());
    const claimed = await claimTasks(internals.store, {
      workerId: internals.workerId,
      limit: options.batch ?? 8,
      leaseMs: options.leaseMs ?? internals.taskLeaseMs,
      now: internals.clock.now(),
      ...(options.regions ? { regions: options.regions } : {}),
    });
    if (claimed.length === 0) return ran;
    await Promise.all(claimed.map((task) => runClaimedTask(internals, task)));
    ran += claimed.length;
    if (options.stopAfter !== undefined && Date.now() >= options.stopAfter) return ran;
  }
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
  let after: (() => void) | undefined;
  await internals.exclusive(workflowId, () =>
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
      if (failed === 0) return;
      after = await settleTaskGroup(internals, tx, workflowId, group, now);
    }),
  );
  after?.();
}
