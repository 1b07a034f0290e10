import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A task to queue. */
export interface NewTask {
  id: string;
  workflowId: string;
  stepName: string;
  functionPath: string;
  state: Record<string, unknown>;
  context: Record<string, unknown>;
  parallelGroup?: string | null;
  taskIndex?: number | null;
  maxAttempts?: number;
  runAfter?: Date;
  /** Routing key: only workers serving this region claim the task. */
  dataRegion?: string | null;
}

/** Queue tasks in one statement (a PARALLEL step inserts all of its tasks at once). */
export async function insertTasks(h: StoreHandle, tasks: readonly NewTask[]): Promise<void> {
  if (tasks.length === 0) return;
  const now = new Date();
  try {
    await h.db
      .insertInto('tasks')
      .values(
        tasks.map((t) => ({
          id: t.id,
          workflow_id: t.workflowId,
          step_name: t.stepName,
          function_path: t.functionPath,
          state: h.codec.json(t.state),
          context: h.codec.json(t.context),
          parallel_group: t.parallelGroup ?? null,
          task_index: t.taskIndex ?? null,
          data_region: t.dataRegion ?? null,
          max_attempts: t.maxAttempts ?? 1,
          run_after: h.codec.time(t.runAfter ?? now),
          created_at: h.codec.time(now),
        })),
      )
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'insert tasks');
  }
}
