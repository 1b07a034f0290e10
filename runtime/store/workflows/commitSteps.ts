/**
 * Step commits of many workflows at once (and the commits that create workflows). A workflow whose row is no longer at the expected
 * version writes nothing; the others commit. PostgreSQL does the batch in one statement;
 * SQLite, with no round trips to save, in one transaction of small statements.
 */
import { translateDriverError } from '../errors.js';
import { commitStepsPostgres } from '../postgres/commitStepsPostgres.js';
import type { Store, TransactionOptions } from '../store.js';
import type { StepCommit } from './stepCommit.js';
import { insertWorkflows } from './insertWorkflows.js';
import { updateWorkflows } from './updateWorkflows.js';
import { writeStepRows } from './writeStepRows.js';

/** Commit `commits`; returns the ids of the workflows whose commit was applied. */
export async function commitSteps(
  store: Store,
  commits: readonly StepCommit[],
  now = new Date(),
  options: TransactionOptions = {},
): Promise<Set<string>> {
  if (commits.length === 0) return new Set();
  if (store.dialect !== 'sqlite') {
    try {
      return await commitStepsPostgres(store, commits, now);
    } catch (error) {
      throw translateDriverError(error, `commit ${commits.length} step(s)`);
    }
  }
  return store.transaction(async (tx) => {
    const creates = commits.flatMap((x) => (x.create ? [x.create] : []));
    await insertWorkflows(tx, creates, now);
    const done = await updateWorkflows(
      tx,
      commits.filter((x) => !x.create).map((x) => x.update),
      now,
    );
    for (const c of creates) done.add(c.id);
    await writeStepRows(
      tx,
      commits.filter((x) => done.has(x.update.id)),
    );
    return done;
  }, options);
}
