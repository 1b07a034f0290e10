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
import type { AuditEvent } from '../audit/appendAuditEvents.js';
import { appendAuditEvents } from '../audit/appendAuditEvents.js';
import type { Codec } from '../codec.js';
import { translateDriverError } from '../errors.js';
import { appendStepLogs, type StepLog } from '../observations/appendStepLogs.js';
import { finishTasksPostgres } from '../postgres/finishTasksPostgres.js';
import type { StoreHandle } from '../store.js';
import { finishTask, type TaskFinish } from './finishTask.js';

/** How one claimed task ended, and the rows that record it. */
export interface TaskOutcome {
  taskId: string;
  workflowId: string;
  /** The task's group: its `parallel_group`, or its own id when it has none. */
  group: string;
  finish: TaskFinish;
  /** Written only if the outcome is. */
  audit: AuditEvent;
  /** Written only if the outcome is. */
  logs: readonly StepLog[];
}

/** A task of a group, as a group's completion reads it. */
export interface TaskGroupMember {
  id: string;
  status: string;
  functionPath: string;
  result: Record<string, unknown> | null;
  error: string | null;
  taskIndex: number;
  /** The task's name in its step (`context.taskName`), else its function path. */
  name: string;
}

/** What {@link finishTasks} recorded and the groups it touched. */
export interface FinishedTasks {
  /** Ids of the tasks whose outcome was recorded; the others' claims were lost. */
  recorded: Set<string>;
  /** Every task of each outcome's group after the update, in declaration order, by {@link taskGroupKey}. */
  groups: Map<string, TaskGroupMember[]>;
}

/** The key of a task group in {@link FinishedTasks.groups}. */
export const taskGroupKey = (workflowId: string, group: string) => `${workflowId}\u0000${group}`;

/** A group member row as both dialects read it. */
export interface TaskGroupRow {
  id: string;
  workflow_id: string;
  parallel_group: string | null;
  status: string;
  result: unknown;
  error: string | null;
  task_index: number | null;
  function_path: string;
  context: unknown;
}

/** Group the rows by task group, each in declaration order. */
export function groupMembers(codec: Codec, rows: readonly TaskGroupRow[]): FinishedTasks['groups'] {
  const groups: FinishedTasks['groups'] = new Map();
  for (const r of rows) {
    const key = taskGroupKey(r.workflow_id, r.parallel_group ?? r.id);
    const context = codec.parseJson(r.context) as Record<string, unknown> | null;
    const members = groups.get(key) ?? [];
    members.push({
      id: r.id,
      status: r.status,
      functionPath: r.function_path,
      result: (codec.parseJson(r.result) as Record<string, unknown> | null) ?? null,
      error: r.error,
      taskIndex: r.task_index ?? 0,
      name: typeof context?.taskName === 'string' ? context.taskName : r.function_path,
    });
    groups.set(key, members);
  }
  for (const members of groups.values()) members.sort((a, b) => a.taskIndex - b.taskIndex);
  return groups;
}

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
