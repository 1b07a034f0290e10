/**
 * Step commits: everything a step changed, written in one database transaction (DESIGN
 * §3.8) — the workflow row (version-checked), its audit rows, metrics, step logs, heartbeat,
 * and the outbox: child workflows, cron registrations, timers, compensation records.
 *
 * Several workflows' commits can share one transaction (see commitQueue.ts): rows of a kind
 * go in one multi-row statement, so a batch costs a handful of round trips and one durable
 * flush however many workflows it carries.
 */
import {
  beatHeartbeats,
  commitSteps,
  ConflictError,
  insertTasks,
  notifyTasks,
  insertTimer,
  insertWorkflows,
  recordCompensation,
  settleTimers,
  updateWorkflows,
  writeStepRows,
  upsertScheduledWorkflow,
  type AuditEvent,
  type CompensationEntry,
  type Heartbeat,
  type NewTask,
  type NewTimer,
  type NewWorkflow,
  type ScheduledWorkflow,
  type StepCommit,
  type StepLog,
  type Store,
  type StoreHandle,
  type TransactionOptions,
  type WorkflowMetric,
  type WorkflowRowUpdate,
  type WorkflowStatus,
} from '../../runtime/index.js';

/** The data of one workflow's commit. */
export interface CommitPlan {
  workflowId: string;
  /** A workflow created by this commit (start): inserted instead of updated. */
  created?: NewWorkflow;
  expectedVersion: number;
  /** The workflow's status at `expectedVersion` (see {@link WorkflowRowUpdate.statusBefore}). */
  statusBefore?: WorkflowStatus;
  row: Omit<WorkflowRowUpdate, 'id' | 'expectedVersion' | 'statusBefore'>;
  audit: AuditEvent[];
  metrics: WorkflowMetric[];
  logs: StepLog[];
  children: NewWorkflow[];
  schedules: ScheduledWorkflow[];
  timers: NewTimer[];
  /** Heartbeats of child workflows this node will drive (a crash before it does leaves them to the zombie scanner). */
  childBeats: Heartbeat[];
  /** Tasks queued by an ASYNC or PARALLEL step (inserted in one statement). */
  tasks: NewTask[];
  /** Settle this workflow's pending timers (all, or one step's), in order. */
  settleTimers: { status: 'FIRED' | 'CANCELLED'; stepName?: string }[];
  compensations: CompensationEntry[];
  /** Rows the embedder writes with this commit (see `RuntimeOptions.onSettled`). */
  outbox: ((tx: StoreHandle) => Promise<void>)[];
  /** Refresh the owner's heartbeat, remove it (waiting or ended), or leave it. */
  heartbeat: { workerId: string; currentStep: string | null; at: Date } | 'delete' | 'keep';
}

/** A plan that writes only its workflow's row, audit, metrics, logs and own heartbeat. */
export const isStepOnly = (p: CommitPlan) =>
  !p.children.length &&
  !p.tasks.length &&
  !p.childBeats.length &&
  !p.schedules.length &&
  !p.timers.length &&
  !p.settleTimers.length &&
  !p.compensations.length &&
  !p.outbox.length;

/**
 * A plan that continues a running workflow and writes only its own rows: not its creation,
 * not its end or a wait, nothing another process, a timer or the embedder's outbox acts on.
 * Such commits may be held and written with the next one (commitQueue.ts, durability
 * `boundaries`).
 */
export const isIntermediateStep = (p: CommitPlan) =>
  !p.created && p.row.status === 'ACTIVE' && isStepOnly(p);

/**
 * The commit that creates a workflow this node drives at once (it carries this node's
 * heartbeat), with no idempotency key, and writes nothing else: nobody can know the workflow
 * before the drive that follows answers, and that answer flushes it. Such a creation may be
 * held like an intermediate step. A start with an idempotency key is written at once, so that
 * a duplicate fails before any of its steps runs.
 */
export const isDrivenCreation = (p: CommitPlan) =>
  p.created !== undefined &&
  p.created.idempotencyKey == null &&
  typeof p.heartbeat === 'object' &&
  isStepOnly(p);

/** A commit that `boundaries` may hold: an intermediate step or a driven creation. */
export const isHoldable = (p: CommitPlan) => isIntermediateStep(p) || isDrivenCreation(p);

/** The store's step commit of a {@link isStepOnly} plan. */
export function toStepCommit(p: CommitPlan): StepCommit {
  return {
    update: rowUpdate(p),
    ...(p.created ? { create: p.created } : {}),
    audit: p.audit,
    metrics: p.metrics,
    logs: p.logs,
    heartbeat:
      typeof p.heartbeat === 'object'
        ? {
            workflowId: p.workflowId,
            workerId: p.heartbeat.workerId,
            currentStep: p.heartbeat.currentStep,
            stepStartedAt: p.heartbeat.at,
            at: p.heartbeat.at,
          }
        : p.heartbeat,
  };
}

/** The version-checked row update of a plan that does not create its workflow. */
const rowUpdate = (p: CommitPlan): WorkflowRowUpdate => ({
  id: p.workflowId,
  expectedVersion: p.expectedVersion,
  ...(p.statusBefore !== undefined && { statusBefore: p.statusBefore }),
  ...p.row,
});

/** A plan that changes the workflow row and nothing else yet. */
export function newPlan(
  workflowId: string,
  expectedVersion: number,
  row: CommitPlan['row'],
  heartbeat: CommitPlan['heartbeat'],
): CommitPlan {
  return {
    workflowId,
    expectedVersion,
    row,
    audit: [],
    metrics: [],
    logs: [],
    children: [],
    schedules: [],
    timers: [],
    tasks: [],
    childBeats: [],
    settleTimers: [],
    compensations: [],
    outbox: [],
    heartbeat,
  };
}

/** Write `plans` in one transaction; returns each workflow's new version, in order. */
export function commitPlans(
  store: Store,
  plans: readonly CommitPlan[],
  now: Date,
  options: TransactionOptions = {},
): Promise<number[]> {
  return store.transaction((tx) => writePlans(tx, plans, now), options);
}

/** Write `plans` inside the caller's transaction `tx`. */
export async function writePlans(
  tx: StoreHandle,
  plans: readonly CommitPlan[],
  now: Date,
): Promise<number[]> {
  await insertWorkflows(
    tx,
    plans.flatMap((p) => (p.created ? [p.created] : [])),
    now,
  );
  const updates = plans.filter((p) => !p.created);
  const updated = await updateWorkflows(tx, updates.map(rowUpdate), now);
  const stale = updates.filter((p) => !updated.has(p.workflowId));
  if (stale.length > 0) {
    throw new ConflictError(
      `workflow ${stale.map((p) => p.workflowId).join(', ')} changed since it was read`,
      {
        details: { workflowIds: stale.map((p) => p.workflowId) },
      },
    );
  }
  await insertWorkflows(
    tx,
    plans.flatMap((p) => p.children),
    now,
  );
  await writeStepRows(tx, plans.map(toStepCommit));
  await beatHeartbeats(
    tx,
    plans.flatMap((p) => p.childBeats),
  );
  const tasks = plans.flatMap((p) => p.tasks);
  await insertTasks(tx, tasks);
  if (tasks.length > 0) await notifyTasks(tx);
  for (const p of plans) {
    for (const s of p.schedules) await upsertScheduledWorkflow(tx, s, now);
    for (const settle of p.settleTimers)
      await settleTimers(tx, p.workflowId, settle.status, settle.stepName);
    for (const t of p.timers) await insertTimer(tx, t);
    for (const c of p.compensations) await recordCompensation(tx, c);
    for (const write of p.outbox) await write(tx);
  }
  return plans.map((p) => (p.created ? 0 : p.expectedVersion + 1));
}

/**
 * Write a batch of plans; each gets its own outcome. Plain step commits (the common case) go
 * through the store's batched step commit, where one plan's version conflict does not undo
 * the others; a batch with outbox rows is one transaction that succeeds or fails whole.
 */
export async function commitBatch(
  store: Store,
  plans: readonly CommitPlan[],
  now: Date,
  options: TransactionOptions = {},
): Promise<(number | Error)[]> {
  if (plans.every(isStepOnly)) {
    const done = await commitSteps(store, plans.map(toStepCommit), now, options);
    return plans.map((p) =>
      done.has(p.workflowId)
        ? p.created
          ? 0
          : p.expectedVersion + 1
        : new ConflictError(`workflow ${p.workflowId} changed since version ${p.expectedVersion}`, {
            details: { workflowId: p.workflowId },
          }),
    );
  }
  return commitPlans(store, plans, now, options);
}

/** Write one plan in its own transaction and return the workflow's new version. */
export async function commitPlan(
  store: Store,
  plan: CommitPlan,
  now: Date,
  options: TransactionOptions = {},
): Promise<number> {
  const [version] = await commitPlans(store, [plan], now, options);
  return version!;
}
