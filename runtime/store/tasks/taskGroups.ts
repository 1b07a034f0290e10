/**
 * The shapes both dialects of `finishTasks` share: a task's outcome, the members of
 * its group as read back, and the grouping of those rows. Apart from finishTasks.ts so the
 * PostgreSQL statement (postgres/finishTasksPostgres.ts) and the portable path import them
 * without importing each other.
 */
import type { AuditEvent } from '../audit/appendAuditEvents.js';
import type { Codec } from '../codec.js';
import type { StepLog } from '../observations/appendStepLogs.js';
import type { TaskFinish } from './finishTask.js';

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

/** What `finishTasks` recorded and the groups it touched. */
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
