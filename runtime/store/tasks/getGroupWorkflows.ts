/**
 * The workflows whose task groups a batch of completions finished, read in one statement in
 * the completion's transaction (the group rows are locked by then, so no other completion of
 * these groups can move the workflows on in between).
 */
import { sql } from 'kysely';
import { translateDriverError } from '../errors.js';
import type { WorkflowExecutionsTable } from '../database.js';
import type { Selectable } from 'kysely';
import type { StoreHandle } from '../store.js';
import { rowToWorkflow, type WorkflowRecord } from '../workflows/record.js';

/** The workflows with `ids` that exist, by id. */
export async function getGroupWorkflows(
  h: StoreHandle,
  ids: readonly string[],
): Promise<Map<string, WorkflowRecord>> {
  if (ids.length === 0) return new Map();
  try {
    const rows =
      h.dialect === 'sqlite'
        ? await h.db.selectFrom('workflow_executions').selectAll().where('id', 'in', ids).execute()
        : (
            await sql<
              Selectable<WorkflowExecutionsTable>
            >`SELECT * FROM workflow_executions WHERE id = ANY(${ids}::uuid[])`.execute(h.db)
          ).rows;
    return new Map(rows.map((r) => [r.id, rowToWorkflow(h.codec, r)]));
  } catch (error) {
    throw translateDriverError(error, 'read the workflows of task groups');
  }
}
