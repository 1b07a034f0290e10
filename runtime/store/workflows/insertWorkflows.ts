import { executeCachedRows } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { type NewWorkflowRow, workflowToRow } from './record.js';

/**
 * Insert new workflows in one statement, each at its `version` (0 when not given). A
 * duplicate id or idempotency key is a ConflictError.
 */
export async function insertWorkflows(
  h: StoreHandle,
  workflows: readonly NewWorkflowRow[],
  now = new Date(),
): Promise<void> {
  if (workflows.length === 0) return;
  const rows = workflows.map((w) => workflowToRow(h.codec, w, w.version ?? 0, now));
  try {
    await executeCachedRows(h, 'insertWorkflows', rows, () =>
      h.db.insertInto('workflow_executions').values(rows),
    );
  } catch (error) {
    throw translateDriverError(error, `insert ${workflows.length} workflow(s)`);
  }
}
