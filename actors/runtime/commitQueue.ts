/**
 * Group commit for step commits. Callers hand in their plan and await their own durable
 * acknowledgement; plans that arrive while a batch is being written go together into the
 * next transaction. An idle queue flushes on the next turn of the event loop, so a lone
 * workflow waits for nothing; under load, batches form by themselves (DESIGN §3.8:
 * throughput from doing less per commit, never from skipping durability).
 *
 * If a batch fails (a version conflict, a constraint), it is rolled back and its plans are
 * committed one by one, so only the plan at fault fails and everyone else's commit stands.
 *
 * Durability `boundaries` (the edge agent's): a batch of nothing but intermediate steps of
 * running workflows ({@link isIntermediateStep}) commits with a deferred flush — durable
 * against a crash of the process at once, against a power cut with the next durable commit
 * — while a workflow's creation, its end, a wait, and every commit with an outbox, tasks,
 * timers or children flush before they are acknowledged. A power cut can then take a running
 * workflow back to its last flushed commit, and the steps since run again (step execution
 * is at-least-once with stable idempotency keys either way); nothing the world has seen —
 * an answer, a record, a task — is lost. `every-step` (default) flushes every commit.
 */
import type { Store } from '../../runtime/index.js';
import { createBatchQueue } from './batchQueue.js';
import { type CommitPlan, commitBatch, commitPlan, isIntermediateStep } from './commit.js';

/** When step commits are flushed to disk (see the module comment). */
export type StepDurability = 'every-step' | 'boundaries';

/** A group-commit queue. */
export interface CommitQueue {
  commit(plan: CommitPlan, now: Date): Promise<number>;
}

interface Pending {
  plan: CommitPlan;
  now: Date;
  resolve: (version: number) => void;
  reject: (error: unknown) => void;
}

/**
 * A queue over `store` that puts at most `maxBatch` plans in one transaction and keeps at
 * most `maxInFlight` transactions open at once (SQLite has one writer: use 1).
 */
export function createCommitQueue(
  store: Store,
  maxBatch = store.dialect === 'sqlite' ? 64 : 8,
  maxInFlight = store.dialect === 'sqlite' ? 1 : 4,
  durability: StepDurability = 'every-step',
): CommitQueue {
  const writeBatch = async (batch: Pending[]) => {
    const now = batch.at(-1)!.now;
    const flush =
      durability === 'boundaries' && batch.every((p) => isIntermediateStep(p.plan))
        ? 'deferred'
        : 'durable';
    try {
      const outcomes = await commitBatch(
        store,
        batch.map((p) => p.plan),
        now,
        { flush },
      );
      batch.forEach((p, i) => {
        const outcome = outcomes[i]!;
        if (outcome instanceof Error) p.reject(outcome);
        else p.resolve(outcome);
      });
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      for (const p of batch)
        await commitPlan(store, p.plan, p.now, { flush }).then(p.resolve, p.reject);
    }
  };

  const queue = createBatchQueue({ maxBatch, maxInFlight, write: writeBatch });

  return {
    commit(plan, now) {
      return new Promise<number>((resolve, reject) => {
        queue.push({ plan, now, resolve, reject });
      });
    },
  };
}
