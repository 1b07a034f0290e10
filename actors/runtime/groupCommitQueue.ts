/**
 * The group-commit queue: commit plans (commitPlan.ts) of many workflows batched into one
 * transaction. Callers hand in their plan and await their own durable acknowledgement; plans
 * that arrive while a batch is being written go together into the next transaction. An idle
 * queue flushes on the next turn of the event loop, so a lone workflow waits for nothing;
 * under load, batches form by themselves (docs/architecture.md#durability: throughput from
 * doing less per commit, never from skipping durability).
 *
 * If a batch fails (a version conflict, a constraint), it is rolled back and its plans are
 * committed one by one, so only the plan at fault fails and everyone else's commit stands.
 *
 * Durability `boundaries` (the edge agent's): the commit of an intermediate step of a running
 * workflow, and the creation of a workflow this node drives at once without an idempotency
 * key ({@link isHoldable}), is held rather than written, and acknowledged at once. Held
 * commits are written in the transaction of the workflow's next commit that is not such a
 * commit, when the drive that made them ends ({@link GroupCommitQueue.release}), or once they have
 * been held `holdMs` (a step that takes long), flushed in the last two cases. A workflow's
 * end, a wait, a keyed or undriven creation, and every commit with an outbox, tasks, timers or
 * children flush before they are acknowledged, together with what its workflow held. A crash
 * of the process or a power cut can then take a running workflow back to its last written
 * commit, and the steps since run again (step execution is at-least-once with stable
 * idempotency keys either way), or lose a workflow whose drive had not answered yet; nothing
 * the world has seen — an answer, a record, a task — is lost. A held creation and the commits
 * that follow it are folded into one ({@link foldPlans}): the row is inserted once, as the
 * last of them leaves it, and a heartbeat the end removes is never written. So a payment —
 * its start, five intermediate steps and its end — is one transaction, one disk flush and one
 * row write, where it was seven commits (docs/guides/edge-agent.md, step durability).
 * `every-step` (default) writes and flushes every commit.
 */
import type { Store } from '../../runtime/index.js';
import { createBatchQueue } from './batchQueue.js';
import { type CommitPlan, foldPlans, isHoldable, versionAfter } from './commitPlan.js';
import { commitOnePlan, commitPlanBatch } from './writePlans.js';

/** When step commits are flushed to disk (see the module comment). */
export type StepDurability = 'every-step' | 'boundaries';

/** Plans per transaction on PostgreSQL by default (see {@link createGroupCommitQueue}). */
export const POSTGRES_COMMIT_BATCH = 16;
/** Transactions open at once on PostgreSQL by default (see {@link createGroupCommitQueue}). */
export const POSTGRES_COMMITS_IN_FLIGHT = 2;

/** How long `boundaries` holds an intermediate step's commit at most (see the module comment). */
export const HOLD_MS = 50;

/** A group-commit queue: plans handed in together are written in one transaction. */
export interface GroupCommitQueue {
  /** Commit `plan`; resolves with the workflow's new version once it is committed (or held). */
  commit(plan: CommitPlan, now: Date): Promise<number>;
  /**
   * Write, and flush, what is held of `workflowId` (of every workflow when omitted): the
   * drive that made it has answered. Rejects with the first held commit's failure.
   */
  release(workflowId?: string): Promise<void>;
}

interface Pending {
  plan: CommitPlan;
  now: Date;
  resolve: (version: number) => void;
  reject: (error: unknown) => void;
  /** Flush this one's transaction even if it holds only intermediate steps. */
  flush?: boolean;
  /** The commits folded into this one ({@link fold}), written one by one if it fails. */
  parts?: Pending[];
}

/**
 * `parts` — a workflow's held creation and the commits after it — as one pending commit of
 * one row write ({@link foldPlans}), or undefined when they do not fold.
 */
function fold(parts: Pending[]): Pending | undefined {
  if (parts.length < 2) return undefined;
  const now = parts.at(-1)!.now;
  const plan = foldPlans(
    parts.map((p) => p.plan),
    now,
  );
  if (!plan) return undefined;
  return {
    plan,
    now,
    flush: parts.some((p) => p.flush || !isHoldable(p.plan)),
    resolve: () => {
      for (const p of parts) p.resolve(versionAfter(p.plan));
    },
    reject: (error) => {
      for (const p of parts) p.reject(error);
    },
    parts,
  };
}

/**
 * A queue over `store` that puts at most `maxBatch` plans in one transaction and keeps at
 * most `maxInFlight` transactions open at once (SQLite has one writer: use 1).
 *
 * On PostgreSQL, two transactions of up to 16 plans: while one is written, the next gathers.
 * That holds as many plans in flight as four of 8 did, in half the statements, and the
 * database's cores go to writing rows rather than to more sessions at once (bench engine at
 * concurrency 32: more steps/s and a shorter tail; bench/results/history.md).
 */
export function createGroupCommitQueue(
  store: Store,
  maxBatch = store.dialect === 'sqlite' ? 64 : POSTGRES_COMMIT_BATCH,
  maxInFlight = store.dialect === 'sqlite' ? 1 : POSTGRES_COMMITS_IN_FLIGHT,
  durability: StepDurability = 'every-step',
  holdMs = HOLD_MS,
  onWritten?: (plans: readonly CommitPlan[]) => void,
): GroupCommitQueue {
  // what a written pending commit carried: its own plan, or the plans folded into it
  const written = (p: Pending) => onWritten?.(p.parts ? p.parts.map((x) => x.plan) : [p.plan]);
  const writeBatch = async (batch: Pending[]) => {
    const now = batch.at(-1)!.now;
    const flush =
      durability === 'boundaries' && batch.every((p) => !p.flush && isHoldable(p.plan))
        ? 'deferred'
        : 'durable';
    try {
      const outcomes = await commitPlanBatch(
        store,
        batch.map((p) => p.plan),
        now,
        { flush },
      );
      batch.forEach((p, i) => {
        const outcome = outcomes[i]!;
        if (outcome instanceof Error) p.reject(outcome);
        else {
          written(p);
          p.resolve(outcome);
        }
      });
    } catch (error) {
      // one by one, folded commits too, so that only the one at fault fails
      const single = batch.flatMap((p) => p.parts ?? [p]);
      if (single.length === 1) {
        single[0]!.reject(error);
        return;
      }
      for (const p of single)
        await commitOnePlan(store, p.plan, p.now, { flush }).then((version) => {
          written(p);
          p.resolve(version);
        }, p.reject);
    }
  };

  const queue = createBatchQueue({ maxBatch, maxInFlight, write: writeBatch });

  // held commits by workflow, in order, and the first failure of each workflow's written ones
  const held = new Map<string, Pending[]>();
  const failed = new Map<string, Error>();
  // held commits queued and not yet written, by workflow
  const writing = new Map<string, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;

  /**
   * Queue what `workflowId` holds, then `next` (its commit that is not held), folded into one
   * row write when they start with the workflow's creation; resolves once what was held is
   * written (a failure is kept for its next commit).
   */
  const writeHeld = (workflowId: string, flush: boolean, next?: Pending): Promise<void> => {
    const list = held.get(workflowId);
    if (!list) {
      if (next) queue.push(next);
      return Promise.resolve();
    }
    held.delete(workflowId);
    if (held.size === 0) clearTimeout(timer);
    const last = list.length - 1;
    const parts: Pending[] = [];
    const written = list.map(
      (p, i) =>
        new Promise<void>((resolve) => {
          parts.push({
            plan: p.plan,
            now: p.now,
            flush: flush && i === last,
            resolve: () => resolve(),
            reject: (error) => {
              if (!failed.has(workflowId))
                failed.set(workflowId, error instanceof Error ? error : new Error(String(error)));
              resolve();
            },
          });
        }),
    );
    if (next) parts.push(next);
    const folded = durability === 'boundaries' ? fold(parts) : undefined;
    for (const p of folded ? [folded] : parts) queue.push(p);
    const all = Promise.all([writing.get(workflowId), ...written]).then(() => undefined);
    writing.set(workflowId, all);
    void all.then(() => {
      if (writing.get(workflowId) === all) writing.delete(workflowId);
    });
    return all;
  };

  /** The failure of a written held commit of `workflowId`, now reported (once). */
  const takeFailure = (workflowId: string): Error | undefined => {
    const error = failed.get(workflowId);
    failed.delete(workflowId);
    return error;
  };

  const hold = (p: Pending) => {
    const list = held.get(p.plan.workflowId);
    if (list) list.push(p);
    else held.set(p.plan.workflowId, [p]);
    p.resolve(p.plan.created ? 0 : p.plan.expectedVersion + 1);
    if (held.size === 1 && list === undefined) {
      // flushed: a drive may answer right after, and the answer must not wait for another flush
      timer = setTimeout(() => {
        for (const id of [...held.keys()]) void writeHeld(id, true);
      }, holdMs);
      timer.unref();
    }
  };

  return {
    commit(plan, now) {
      return new Promise<number>((resolve, reject) => {
        const failure = takeFailure(plan.workflowId);
        if (failure !== undefined) {
          held.delete(plan.workflowId);
          reject(failure);
          return;
        }
        const pending: Pending = { plan, now, resolve, reject };
        if (durability === 'boundaries' && isHoldable(plan)) {
          hold(pending);
          return;
        }
        void writeHeld(plan.workflowId, false, pending);
      });
    },

    async release(workflowId) {
      const ids =
        workflowId === undefined ? [...new Set([...held.keys(), ...writing.keys()])] : [workflowId];
      // also what the window sent on its way and is not written yet
      await Promise.all(ids.map((id) => writeHeld(id, true).then(() => writing.get(id))));
      for (const id of ids) {
        const failure = takeFailure(id);
        if (failure !== undefined) throw failure;
      }
    },
  };
}
