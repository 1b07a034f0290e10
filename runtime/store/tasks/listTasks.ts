import type { TaskStatus } from '../../model/statuses.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A stored task (the fields callers read). */
export interface TaskRecord {
  id: string;
  workflowId: string;
  stepName: string;
  functionPath: string;
  status: TaskStatus;
  workerId: string | null;
  result: unknown;
  error: string | null;
  parallelGroup: string | null;
  taskIndex: number | null;
  attempts: number;
  /** When a CLAIMED task's lease runs out (null when not claimed). */
  leaseExpiresAt: Date | null;
  createdAt: Date;
}

/** Tasks of one workflow, in creation and declaration order. */
export async function listTasks(h: StoreHandle, workflowId: string): Promise<TaskRecord[]> {
  try {
    const rows = await h.db
      .selectFrom('tasks')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('created_at')
      .orderBy('task_index')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      workflowId: r.workflow_id,
      stepName: r.step_name,
      functionPath: r.function_path,
      status: r.status as TaskStatus,
      workerId: r.worker_id,
      result: h.codec.parseJson(r.result) ?? null,
      error: r.error,
      parallelGroup: r.parallel_group,
      taskIndex: r.task_index,
      attempts: h.codec.parseInt(r.attempts),
      leaseExpiresAt: r.lease_expires_at === null ? null : h.codec.parseTime(r.lease_expires_at),
      createdAt: h.codec.parseTime(r.created_at),
    }));
  } catch (error) {
    throw translateDriverError(error, `list tasks of ${workflowId}`);
  }
}
