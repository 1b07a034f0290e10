/**
 * Recording the outcomes of many claimed tasks at once, with what a worker needs to decide
 * which task groups they complete. For each outcome: if the worker still holds the task, its
 * new status and result are written together with its audit row and step logs; a task whose
 * lease expired and was taken over is left alone, and so are its rows. Every task of the
 * outcomes' groups is returned as it stands afterwards, read under the group's row locks
 * (PostgreSQL), so exactly one of several workers finishing a group's last tasks at the same
 * moment sees the group complete.
 *
 * PostgreSQL does it in one statement (postgres/finishTasksPostgres.ts); SQLite, with one
 * writer and no round trips to save, in small statements in the caller's transaction.
 */
import { appendAuditEvents } from '../audit/appendAuditEvents.js';
import { translateDriverError } from '../errors.js';
import { appendStepLogs } from '../observations/appendStepLogs.js';
import { finishTasksPostgres } from '../postgres/finishTasksPostgres.js';
import type { StoreHandle } from '../store.js';
import { finishTask } from './finishTask.js';
import { type FinishedTasks, groupMembers, type TaskOutcome, taskGroupKey } from './taskGroups.js';

/** Re-exported for the callers that record outcomes. */
export type { TaskOutcome } from './taskGroups.js';

/**
 * Record `outcomes` of tasks `workerId` claimed, in the caller's transaction `h`; returns
 * which were recorded and every task of their groups as it now stands. The groups' rows stay
 * locked until `h` commits (PostgreSQL).
 */
export async function finishTasks(
  h: StoreHandle,
  workerId: string,
  outcomes: readonly TaskOutcome[],
  now: Date,
): Promise<FinishedTasks> {
  if (outcomes.length === 0) return { recorded: new Set(), groups: new Map() };
  if (h.dialect !== 'sqlite') {
    try {
      return await finishTasksPostgres(h, workerId, outcomes, now);
    } catch (error) {
      throw translateDriverError(error, `finish ${outcomes.length} task(s)`);
    }
  }
  const recorded = new Set<string>();
  for (const o of outcomes)
    if (await finishTask(h, o.taskId, workerId, o.finish, now)) recorded.add(o.taskId);
  const written = outcomes.filter((o) => recorded.has(o.taskId));
  await appendAuditEvents(
    h,
    written.map((o) => o.audit),
  );
  await appendStepLogs(
    h,
    written.flatMap((o) => o.logs),
  );
  const keys = new Set(outcomes.map((o) => taskGroupKey(o.workflowId, o.group)));
  try {
    const rows = await h.db
      .selectFrom('tasks')
      .select([
        'id',
        'workflow_id',
        'parallel_group',
        'status',
        'result',
        'error',
        'task_index',
        'function_path',
        'context',
      ])
      .where('workflow_id', 'in', [...new Set(outcomes.map((o) => o.workflowId))])
      .execute();
    const members = rows.filter((r) =>
      keys.has(taskGroupKey(r.workflow_id, r.parallel_group ?? r.id)),
    );
    return { recorded, groups: groupMembers(h.codec, members) };
  } catch (error) {
    throw translateDriverError(error, 'read task groups');
  }
}
