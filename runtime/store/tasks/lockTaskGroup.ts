import { sql } from 'kysely';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/**
 * Serialize completions of one task group (PostgreSQL row locks; SQLite has one writer), so
 * exactly one completion sees the group finished and resumes the workflow.
 */
export async function lockTaskGroup(
  h: StoreHandle,
  workflowId: string,
  group: string,
): Promise<void> {
  if (h.dialect === 'sqlite') return;
  try {
    await sql`SELECT id FROM tasks WHERE workflow_id = ${workflowId} AND parallel_group = ${group} ORDER BY id FOR UPDATE`.execute(
      h.db,
    );
  } catch (error) {
    throw translateDriverError(error, 'lock task group');
  }
}
