/**
 * Recording task outcomes and settling the task groups they complete, a batch at a time:
 * outcomes that finish while a batch is being written wait and go together into the next
 * (group commit, as for step commits — docs/architecture.md#durability), so a worker pays one or two statements
 * per batch of tasks rather than ten per task. A batch is recorded one of two ways:
 *
 * - direct (PostgreSQL and PGlite; the common case): retries, and the outcome of an ASYNC
 *   step's task — its group's only task — with the settle of its workflow prepared here from
 *   the row the claim returned. One statement records them and applies each settle only if
 *   the task is still held, alone in its group, and the workflow still at the version the
 *   settle was prepared from; it also claims tasks for the slots the batch frees (store:
 *   settleTasksPostgres).
 * - grouped (PARALLEL tasks, SQLite, and direct outcomes whose settle no longer applies): one
 *   transaction records the outcomes under row locks on their whole groups and reads the
 *   groups back (store: finishTasks); the groups with no unfinished task left are settled
 *   from a fresh read of their workflows, written as one batch of commit plans.
 *
 * Either way an outcome and the settle it implies commit together with their audit rows, so
 * a result is applied exactly once however many workers finish a group's tasks at the same
 * moment (row locks order them; only the one that sees no task left settles the group), and
 * the late outcome of a task another worker took over is never recorded. If a batch fails (a
 * deadlock, a workflow changed under a transaction), its outcomes are recorded one by one the
 * grouped way, so only the outcome at fault fails.
 */
import {
  commitStepWritesPostgres,
  settleTasksPostgres,
  ConflictError,
  finishTasks,
  getGroupWorkflows,
  mergeAll,
  StepError,
  toError,
  translateDriverError,
  type ClaimedTask,
  type TaskClaim,
  type JsonObject,
  type SaffronError,
  type StoreHandle,
  taskGroupKey,
  type TaskSettlement,
  type TaskGroupMember,
  type TaskOutcome,
} from '../../runtime/index.js';
import { wfEvents, type WorkflowEvent } from '../workflow/events.js';
import { workflowContext, workflowPosition } from '../workflow/snapshot.js';
import { type CommitPlan, isStepOnly, toStepWrite } from './commitPlan.js';
import { writePlans } from './writePlans.js';
import { createBatchQueue } from './batchQueue.js';
import { finishAudit } from './outcome.js';
import { type Internals, type LiveWorkflow, restoreLive } from './internals.js';
import { automateNext, buildTransition, compensationOf, isTerminal } from './planTransition.js';

/** A task group with no unfinished task left, to settle. */
export interface FinishedGroup {
  workflowId: string;
  group: string;
  /** Every task of the group, in declaration order. */
  members: readonly TaskGroupMember[];
}

/** Background work a settle starts once its transaction has committed. */
type After = () => void;

const unfinished = (m: TaskGroupMember) => m.status === 'PENDING' || m.status === 'CLAIMED';

/**
 * The transition that settles `group` of `record`: merge the results in declaration order
 * (with the step's merge rules) and move the workflow on, or fail the step. Undefined when
 * the workflow no longer waits for this group (it timed out, was cancelled, moved on).
 */
function settleTransition(
  internals: Internals,
  current: LiveWorkflow,
  group: string,
  tasks: readonly TaskGroupMember[],
): { plan: CommitPlan; after: After } | undefined {
  if (tasks.some(unfinished)) return undefined;
  const { record } = current;
  const position = workflowPosition(current.live);
  if (position.sub !== 'waitingTasks' || workflowContext(current.live).taskGroup !== group)
    return undefined;
  const step = current.live.compiled.stepAt(position.key)!.step;
  const failed = tasks.filter((t) => t.status !== 'COMPLETED');
  const results = tasks.filter((t) => t.status === 'COMPLETED').map((t) => t.result ?? {});
  const options =
    step.type === 'PARALLEL'
      ? { strategy: step.merge_strategy, onConflict: step.merge_conflict_behavior }
      : {};
  let state = record.state;
  let error: SaffronError | undefined;
  try {
    state = mergeAll(record.state, results, options);
  } catch (cause) {
    error = new StepError('STEP_RESULT_INVALID', step.name, toError(cause).message, { cause });
  }
  if (!error && internals.stateGuard) error = internals.stateGuard(state, step.name);
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
  const advance = !error && automateNext(step, t.next);
  const after = () => {
    internals.onCommitted?.([t.plan]);
    if (!internals.driveChildren && !internals.runTasks) return;
    if ((t.status === 'ACTIVE' && advance) || workflowPosition(t.next).key === 'compensating') {
      internals.background(record.id, () => internals.drive(record.id, { kind: 'continue' }));
    }
    if (isTerminal(t.status) && record.parentWorkflowId) {
      const parent = record.parentWorkflowId;
      internals.background(parent, () => internals.drive(parent, { kind: 'child-done' }));
    }
  };
  return { plan: t.plan, after };
}

/**
 * Settle `groups` (each with no unfinished task) inside `tx`, which must hold their rows
 * locked: read their workflows, and write every resulting transition as one batch of plans.
 * Returns what to start after the commit.
 */
export async function settleGroups(
  internals: Internals,
  tx: StoreHandle,
  groups: readonly FinishedGroup[],
  now: Date,
): Promise<After[]> {
  if (groups.length === 0) return [];
  const records = await getGroupWorkflows(tx, [...new Set(groups.map((g) => g.workflowId))]);
  const settled: { plan: CommitPlan; after: After }[] = [];
  for (const g of groups) {
    const record = records.get(g.workflowId);
    const s =
      record && settleTransition(internals, restoreLive(internals, record), g.group, g.members);
    if (s) settled.push(s);
  }
  // one order for the workflow rows of every batch
  settled.sort((a, b) => (a.plan.workflowId < b.plan.workflowId ? -1 : 1));
  await writeSettlePlans(
    tx,
    settled.map((s) => s.plan),
    now,
  );
  return settled.map((s) => s.after);
}

/** A plan that only moves an existing workflow on (see commitPlan.ts `isStepOnly`). */
const movesOnly = (p: CommitPlan) => !p.created && isStepOnly(p);

/**
 * Write settle plans in `tx`. On PostgreSQL the plain ones (the usual case: a workflow moved
 * on or ended) go in one statement for the whole batch; the rest through the general path.
 * A workflow not at its expected version fails the whole transaction.
 */
async function writeSettlePlans(
  tx: StoreHandle,
  plans: readonly CommitPlan[],
  now: Date,
): Promise<void> {
  const single = tx.dialect === 'sqlite' ? [] : plans.filter(movesOnly);
  if (single.length > 0) {
    let applied: Set<string>;
    try {
      applied = await commitStepWritesPostgres(tx, single.map(toStepWrite), now);
    } catch (error) {
      throw translateDriverError(error, `settle ${single.length} task group(s)`);
    }
    const stale = single.filter((p) => !applied.has(p.workflowId)).map((p) => p.workflowId);
    if (stale.length > 0)
      throw new ConflictError(`workflow ${stale.join(', ')} changed since it was read`, {
        details: { workflowIds: stale },
      });
  }
  await writePlans(
    tx,
    plans.filter((p) => !single.includes(p)),
    now,
  );
}

/**
 * Record `outcomes` of this worker's tasks inside `tx` and settle the groups they complete;
 * returns what to start after the commit.
 */
async function recordOutcomes(
  internals: Internals,
  tx: StoreHandle,
  outcomes: readonly TaskOutcome[],
  now: Date,
): Promise<After[]> {
  const { recorded, groups } = await finishTasks(tx, internals.workerId, outcomes, now);
  const finished = new Map<string, FinishedGroup>();
  for (const o of outcomes) {
    // a retry leaves its group unfinished; a lost claim is another worker's to record
    if (o.finish.status === 'RETRY' || !recorded.has(o.taskId)) continue;
    const key = taskGroupKey(o.workflowId, o.group);
    const members = groups.get(key) ?? [];
    if (!members.some(unfinished))
      finished.set(key, { workflowId: o.workflowId, group: o.group, members });
  }
  return settleGroups(internals, tx, [...finished.values()], now);
}

/** Record outcomes in one transaction (the general way), then start what their settles imply. */
async function commitGrouped(
  internals: Internals,
  outcomes: readonly TaskOutcome[],
): Promise<void> {
  if (outcomes.length === 0) return;
  const afters = await internals.store.transaction((tx) =>
    recordOutcomes(internals, tx, outcomes, internals.clock.now()),
  );
  for (const after of afters) after();
}

/** A task outcome handed to the queue, with the claimed task it ends. */
export interface FinishedTask {
  task: ClaimedTask;
  outcome: TaskOutcome;
}

/**
 * How `f` can be recorded without reading its group: a retry needs no settle; the last outcome
 * of an ASYNC step (its group's only task) settles the workflow read at the claim, prepared
 * here. Undefined when it needs the general way (a PARALLEL task, no claim-time workflow, a
 * settle that writes more than a step commit, an embedder hook on terminal commits).
 */
function prepareDirect(
  internals: Internals,
  f: FinishedTask,
): { completion: TaskSettlement; after?: After } | undefined {
  const { task, outcome } = f;
  if (outcome.finish.status === 'RETRY') return { completion: outcome };
  const { workflow } = task;
  if (!workflow || internals.onSettled) return undefined;
  // the claim leaves the definition out: a machine not compiled here yet is compiled by the
  // general way, from the row it reads
  if (
    workflow.definitionSnapshot === null &&
    !(workflow.definitionHash && internals.compiled.has(workflow.definitionHash))
  )
    return undefined;
  let current: LiveWorkflow;
  try {
    current = restoreLive(internals, workflow);
  } catch {
    return undefined; // the general way reports it
  }
  const position = workflowPosition(current.live);
  if (position.sub !== 'waitingTasks' || workflowContext(current.live).taskGroup !== outcome.group)
    return undefined;
  if (current.live.compiled.stepAt(position.key)?.step.type !== 'ASYNC') return undefined;
  const member: TaskGroupMember = {
    id: task.id,
    status: outcome.finish.status,
    functionPath: task.functionPath,
    result: outcome.finish.status === 'COMPLETED' ? outcome.finish.result : null,
    error: outcome.finish.status === 'COMPLETED' ? null : outcome.finish.error,
    taskIndex: task.taskIndex ?? 0,
    name: typeof task.context.taskName === 'string' ? task.context.taskName : task.functionPath,
  };
  const settled = settleTransition(internals, current, outcome.group, [member]);
  if (
    !settled ||
    !movesOnly(settled.plan) ||
    settled.plan.metrics.length ||
    settled.plan.logs.length
  )
    return undefined;
  return { completion: { ...outcome, settle: toStepWrite(settled.plan) }, after: settled.after };
}

/**
 * Record a batch of outcomes. On PostgreSQL and PGlite, retries and ASYNC completions go in
 * one statement with the settles prepared for them (store: settleTasksPostgres); the rest,
 * and any whose prepared settle no longer applies, the general way in one transaction.
 */
async function commitOutcomes(
  internals: Internals,
  finished: readonly FinishedTask[],
  direct: boolean,
  refill?: Refill,
): Promise<void> {
  const store = internals.store;
  if (!direct || store.dialect === 'sqlite') {
    await commitGrouped(
      internals,
      finished.map((f) => f.outcome),
    );
    return;
  }
  const grouped: TaskOutcome[] = [];
  const prepared: { completion: TaskSettlement; after?: After }[] = [];
  for (const f of finished) {
    const p = prepareDirect(internals, f);
    if (p) prepared.push(p);
    else grouped.push(f.outcome);
  }
  if (prepared.length > 0) {
    const next = refill?.claim(prepared.length);
    let claimed: ClaimedTask[] = [];
    try {
      const completed = await settleTasksPostgres(
        store,
        internals.workerId,
        prepared.map((p) => p.completion),
        internals.clock.now(),
        next,
      );
      claimed = completed.claimed;
      for (const p of prepared) {
        const result = completed.results.get(p.completion.taskId);
        if (result === 'recorded') p.after?.();
        else if (result === 'deferred') grouped.push(p.completion);
      }
    } finally {
      if (next) refill?.claimed(claimed, next.limit);
    }
  }
  await commitGrouped(internals, grouped);
}

/**
 * The worker loop's side of a queue: a batch recorded in one statement also claims tasks for
 * the slots it frees (PostgreSQL and PGlite), so a busy worker needs no claim of its own.
 */
export interface Refill {
  /** The claim to make with a batch that frees `freed` slots, or undefined for none. */
  claim(freed: number): TaskClaim | undefined;
  /** What that claim (of `limit`) got; called before the batch's outcomes resolve, also after a failure. */
  claimed(tasks: ClaimedTask[], limit: number): void;
}

/** A group-commit queue of task outcomes. */
export interface OutcomeQueue {
  /** Record how `finished.task` ended; resolves once it is durable (or known lost to another worker). */
  record(finished: FinishedTask): Promise<void>;
}

interface Pending {
  finished: FinishedTask;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Most outcomes in one transaction. */
const MAX_BATCH = 64;

/**
 * A queue that writes outcomes in batches, at most `maxInFlight` transactions at once (SQLite
 * has one writer: 1). An idle queue writes on the next turn of the event loop, so a lone
 * outcome waits for nothing.
 */
export function createOutcomeQueue(
  internals: Internals,
  refill?: Refill,
  maxInFlight = internals.store.dialect === 'sqlite' ? 1 : 2,
): OutcomeQueue {
  const writeBatch = async (batch: Pending[]) => {
    try {
      await commitOutcomes(
        internals,
        batch.map((p) => p.finished),
        true,
        refill,
      );
      for (const p of batch) p.resolve();
    } catch {
      // one at a time the general way, so only the outcome at fault fails; an outcome the
      // batch did record is found no longer held and left alone
      for (const p of batch) {
        await internals
          .exclusive(p.finished.task.workflowId, () =>
            commitOutcomes(internals, [p.finished], false),
          )
          .then(p.resolve, p.reject);
      }
    }
  };

  const queue = createBatchQueue({ maxBatch: MAX_BATCH, maxInFlight, write: writeBatch });

  return {
    record(finished) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ finished, resolve, reject });
      });
    },
  };
}
