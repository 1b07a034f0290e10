/**
 * Many version-checked workflow updates at once, for batched step commits. PostgreSQL does
 * it in one statement; SQLite, where statements cost no round trip, runs them one by one in
 * the caller's transaction.
 */
import type { JsonObject } from '../../model/json.js';
import type { WorkflowStatus } from '../../model/statuses.js';
import { translateDriverError } from '../errors.js';
import { updateWorkflowsBatchPostgres } from '../postgres/updateWorkflowsBatch.js';
import type { StoreHandle } from '../store.js';
import { updateWorkflow } from './updateWorkflow.js';
import { ConflictError } from '../errors.js';

/** The full set of columns a step commit writes. */
export interface WorkflowRowUpdate {
  id: string;
  expectedVersion: number;
  status: WorkflowStatus;
  currentStepIndex: number;
  currentStep: string | null;
  state: JsonObject;
  actorSnapshot: JsonObject;
  /**
   * The status the row has at `expectedVersion`, when the caller knows it. SQLite rewrites
   * the entry of every index on a column the UPDATE sets, changed or not, so an unchanged
   * status is left out there: one index page fewer in the WAL per step commit.
   */
  statusBefore?: WorkflowStatus;
}

/**
 * Apply `updates`; returns the ids that were at their expected version (those are updated).
 * A workflow with several updates, in order, is returned only if every one of them applied.
 */
export async function updateWorkflows(
  h: StoreHandle,
  updates: readonly WorkflowRowUpdate[],
  now = new Date(),
): Promise<Set<string>> {
  if (updates.length === 0) return new Set();
  // one statement updates a row once: a workflow updated twice goes one by one
  if (h.dialect !== 'sqlite' && new Set(updates.map((u) => u.id)).size === updates.length) {
    try {
      return await updateWorkflowsBatchPostgres(h, updates, now);
    } catch (error) {
      throw translateDriverError(error, `update ${updates.length} workflows`);
    }
  }
  const done = new Set<string>();
  const stale = new Set<string>();
  for (const u of updates) {
    try {
      const changes = u.statusBefore === u.status ? { ...u, status: undefined } : u;
      await updateWorkflow(h, u.id, u.expectedVersion, changes, now);
      done.add(u.id);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      stale.add(u.id);
    }
  }
  for (const id of stale) done.delete(id);
  return done;
}
