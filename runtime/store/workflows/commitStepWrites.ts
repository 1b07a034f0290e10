/**
 * Committing a batch of step writes — many workflows' steps at once, creations included —
 * each applied or not on its own: a workflow whose row is no longer at the expected version
 * writes nothing, and the others commit. PostgreSQL does the batch in one statement
 * (postgres/commitStepWritesPostgres.ts); SQLite, with no round trips to save, in one
 * transaction of small statements.
 */
import { translateDriverError } from '../errors.js';
import { commitStepWritesPostgres } from '../postgres/commitStepWritesPostgres.js';
import type { Store, TransactionOptions } from '../store.js';
import type { StepWrite } from './stepWrite.js';
import { insertWorkflows } from './insertWorkflows.js';
import { updateWorkflows } from './updateWorkflows.js';
import { writeStepRows } from './writeStepRows.js';

/** Commit `writes`; returns the ids of the workflows whose write was applied. */
export async function commitStepWrites(
  store: Store,
  writes: readonly StepWrite[],
  now = new Date(),
  options: TransactionOptions = {},
): Promise<Set<string>> {
  if (writes.length === 0) return new Set();
  if (store.dialect !== 'sqlite') {
    try {
      return await commitStepWritesPostgres(store, writes, now);
    } catch (error) {
      throw translateDriverError(error, `commit ${writes.length} step(s)`);
    }
  }
  return store.transaction(async (tx) => {
    const creates = writes.flatMap((x) => (x.create ? [x.create] : []));
    await insertWorkflows(tx, creates, now);
    const done = await updateWorkflows(
      tx,
      writes.filter((x) => !x.create).map((x) => x.update),
      now,
    );
    for (const c of creates) done.add(c.id);
    await writeStepRows(
      tx,
      writes.filter((x) => done.has(x.update.id)),
    );
    return done;
  }, options);
}
