import { sql, type ExpressionBuilder } from 'kysely';
import type { Database } from '../database.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** How a claimed task ended. */
export type TaskFinish =
  | { status: 'COMPLETED'; result: Record<string, unknown> }
  | { status: 'FAILED'; error: string }
  | { status: 'RETRY'; error: string; runAfter: Date };

/**
 * Record how a task ended, if `workerId` still holds it (a task whose lease expired and was
 * taken over is not finished twice). Returns false when the claim was lost.
 */
export async function finishTask(
  h: StoreHandle,
  taskId: string,
  workerId: string,
  finish: TaskFinish,
  now: Date,
): Promise<boolean> {
  const at = h.codec.time(now);
  const set =
    finish.status === 'COMPLETED'
      ? {
          status: 'COMPLETED',
          result: h.codec.json(finish.result),
          error: null,
          completed_at: at,
          lease_expires_at: null,
        }
      : finish.status === 'FAILED'
        ? { status: 'FAILED', error: finish.error, completed_at: at, lease_expires_at: null }
        : {
            status: 'PENDING',
            error: finish.error,
            run_after: h.codec.time(finish.runAfter),
            worker_id: null,
            claimed_at: null,
            lease_expires_at: null,
          };
  try {
    const r = await h.db
      .updateTable('tasks')
      .set(set)
      .where('id', '=', taskId)
      .where('status', '=', 'CLAIMED')
      .where('worker_id', '=', workerId)
      .executeTakeFirst();
    return r.numUpdatedRows === 1n;
  } catch (error) {
    throw translateDriverError(error, `finish task ${taskId}`);
  }
}

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

/**
 * Put tasks whose lease expired back to PENDING (their worker died); returns how many. Rows
 * another transaction holds (a completion locking its group) are skipped, not waited for:
 * a plain bulk UPDATE would lock rows in scan order and deadlock against group locks.
 */
export async function releaseExpiredTasks(h: StoreHandle, now: Date): Promise<number> {
  const expired = (eb: ExpressionBuilder<Database, 'tasks'>) =>
    eb.and([eb('status', '=', 'CLAIMED'), eb('lease_expires_at', '<=', h.codec.time(now))]);
  try {
    const update = h.db
      .updateTable('tasks')
      .set({ status: 'PENDING', worker_id: null, claimed_at: null, lease_expires_at: null });
    const r =
      h.dialect === 'sqlite'
        ? await update.where(expired).executeTakeFirst()
        : await update
            .where('id', 'in', (eb) =>
              eb.selectFrom('tasks').select('id').where(expired).forUpdate().skipLocked(),
            )
            .where(expired)
            .executeTakeFirst();
    return Number(r.numUpdatedRows);
  } catch (error) {
    throw translateDriverError(error, 'release expired tasks');
  }
}

/** Fail every unfinished task of a group (a PARALLEL timeout); returns how many. */
export async function failUnfinishedTasks(
  h: StoreHandle,
  workflowId: string,
  group: string,
  error: string,
  now: Date,
): Promise<number> {
  try {
    const r = await h.db
      .updateTable('tasks')
      .set({ status: 'FAILED', error, completed_at: h.codec.time(now), lease_expires_at: null })
      .where('workflow_id', '=', workflowId)
      .where('parallel_group', '=', group)
      .where('status', 'in', ['PENDING', 'CLAIMED'])
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  } catch (cause) {
    throw translateDriverError(cause, 'fail unfinished tasks');
  }
}
