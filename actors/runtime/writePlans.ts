/**
 * Writing commit plans (commitPlan.ts): everything a transition changed, written in one
 * database transaction (docs/architecture.md#durability) — the workflow row (version-checked),
 * its audit rows, metrics, step logs, heartbeat, and the outbox: child workflows, cron
 * registrations, timers, tasks, compensation records.
 *
 * Several workflows' plans can share one transaction (see groupCommitQueue.ts): rows of a
 * kind go in one multi-row statement, so a batch costs a handful of round trips and one
 * durable flush however many workflows it carries.
 */
import {
  beatHeartbeats,
  commitStepWrites,
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
  type Store,
  type StoreHandle,
  type TransactionOptions,
} from '../../runtime/index.js';
import { type CommitPlan, isStepOnly, rowUpdate, toStepWrite, versionAfter } from './commitPlan.js';

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
  await writeStepRows(tx, plans.map(toStepWrite));
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
  return plans.map(versionAfter);
}

/**
 * Write a batch of plans; each gets its own outcome. Plain step writes of distinct
 * workflows (the common case) go through the store's batch of step writes, where one plan's
 * version conflict does not undo the others; any other batch is one transaction that
 * succeeds or fails whole.
 */
export async function commitPlanBatch(
  store: Store,
  plans: readonly CommitPlan[],
  now: Date,
  options: TransactionOptions = {},
): Promise<(number | Error)[]> {
  // the store's step-write batch reports by workflow: a workflow twice goes through the
  // transaction, where one stale commit fails it whole and the batch is redone one by one
  if (plans.every(isStepOnly) && new Set(plans.map((p) => p.workflowId)).size === plans.length) {
    const done = await commitStepWrites(store, plans.map(toStepWrite), now, options);
    return plans.map((p) =>
      done.has(p.workflowId)
        ? versionAfter(p)
        : new ConflictError(`workflow ${p.workflowId} changed since version ${p.expectedVersion}`, {
            details: { workflowId: p.workflowId },
          }),
    );
  }
  return commitPlans(store, plans, now, options);
}

/** Write one plan in its own transaction and return the workflow's new version. */
export async function commitOnePlan(
  store: Store,
  plan: CommitPlan,
  now: Date,
  options: TransactionOptions = {},
): Promise<number> {
  const [version] = await commitPlans(store, [plan], now, options);
  return version!;
}
