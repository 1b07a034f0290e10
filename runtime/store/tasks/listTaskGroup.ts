import type { StoreHandle } from '../store.js';

/** Tasks of a group with their outcome, in declaration order. */
export async function listTaskGroup(h: StoreHandle, workflowId: string, group: string) {
  const rows = await h.db
    .selectFrom('tasks')
    .select([
      'id',
      'step_name',
      'function_path',
      'status',
      'result',
      'error',
      'task_index',
      'context',
    ])
    .where('workflow_id', '=', workflowId)
    .where('parallel_group', '=', group)
    .orderBy('task_index')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    functionPath: r.function_path,
    result: (h.codec.parseJson(r.result) as Record<string, unknown> | null) ?? null,
    error: r.error,
    taskIndex: r.task_index ?? 0,
    name:
      ((h.codec.parseJson(r.context) as Record<string, unknown> | null)?.taskName as
        string | undefined) ?? r.function_path,
  }));
}
