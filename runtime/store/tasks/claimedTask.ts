/** A task a worker has claimed: everything it needs to run it. */
import { sql, type Selectable } from 'kysely';
import type { JsonObject } from '../../model/json.js';
import type { Codec } from '../codec.js';
import type { TasksTable, WorkflowExecutionsTable } from '../database.js';
import { rowToWorkflow, type WorkflowRecord } from '../workflows/record.js';

/** A claimed task. */
export interface ClaimedTask {
  id: string;
  workflowId: string;
  stepName: string;
  functionPath: string;
  state: JsonObject;
  context: JsonObject;
  parallelGroup: string | null;
  taskIndex: number | null;
  /** Attempts including this one. */
  attempts: number;
  maxAttempts: number;
  dataRegion: string | null;
  /**
   * The task's workflow as it was at the claim (PostgreSQL and PGlite; SQLite reads it when
   * needed). A completion may prepare the workflow's next commit from it: that commit is
   * version-checked, so a workflow that changed since is never overwritten. It comes without
   * its definition snapshot (`definitionSnapshot` null), which can be many kilobytes per task:
   * the runtime finds the compiled machine by `definitionHash`, and a worker that has not
   * compiled it yet records the outcome the general way, which reads the whole row.
   */
  workflow?: WorkflowRecord;
}

/** The columns a claim returns (`RETURNING`), so a claim needs no second read. */
const CLAIMED_COLUMNS = [
  'id',
  'workflow_id',
  'step_name',
  'function_path',
  'state',
  'context',
  'parallel_group',
  'task_index',
  'attempts',
  'max_attempts',
  'data_region',
] as const;

/** The `RETURNING` list of a claim statement, the columns qualified with `table` if given. */
export const claimedColumns = (table?: string) =>
  sql.raw(CLAIMED_COLUMNS.map((c) => (table ? `${table}.${c}` : c)).join(', '));

/**
 * The workflow columns a claim returns beside the task's (PostgreSQL and PGlite), each as
 * `w_<column>`: every column but the definition snapshot. Plain columns, not the row as
 * JSON: `to_jsonb` of the row built a JSON document of every column (the snapshot
 * included, then removed) for the server to print and the worker to parse once more.
 */
const WORKFLOW_COLUMNS = [
  'id',
  'workflow_type',
  'workflow_version',
  'status',
  'current_step_index',
  'current_step',
  'state',
  'definition_hash',
  'actor_snapshot',
  'owner_id',
  'data_region',
  'parent_workflow_id',
  'idempotency_key',
  'version',
  'metadata',
  'created_at',
  'updated_at',
] as const;

/** The workflow part of a claim's `RETURNING` list, from the workflow row aliased `table`. */
export const claimedWorkflowColumns = (table: string) =>
  sql.raw(WORKFLOW_COLUMNS.map((c) => `${table}.${c} AS w_${c}`).join(', '));

type WorkflowRow = Selectable<WorkflowExecutionsTable>;

/** A tasks row as a claim returns it, with its workflow's columns where the dialect has them. */
export type ClaimedRow = Pick<Selectable<TasksTable>, (typeof CLAIMED_COLUMNS)[number]> & {
  [K in (typeof WORKFLOW_COLUMNS)[number] as `w_${K}`]?: WorkflowRow[K];
};

/** Decode a claimed tasks row. */
export function rowToClaimedTask(codec: Codec, r: ClaimedRow): ClaimedTask {
  const task: ClaimedTask = {
    id: r.id,
    workflowId: r.workflow_id,
    stepName: r.step_name,
    functionPath: r.function_path,
    state: codec.parseJson(r.state) as JsonObject,
    context: codec.parseJson(r.context) as JsonObject,
    parallelGroup: r.parallel_group,
    taskIndex: r.task_index,
    attempts: codec.parseInt(r.attempts),
    maxAttempts: codec.parseInt(r.max_attempts),
    dataRegion: r.data_region,
  };
  if (r.w_id != null)
    task.workflow = rowToWorkflow(codec, {
      id: r.w_id,
      workflow_type: r.w_workflow_type!,
      workflow_version: r.w_workflow_version ?? null,
      status: r.w_status!,
      current_step_index: r.w_current_step_index!,
      current_step: r.w_current_step ?? null,
      state: r.w_state!,
      definition_snapshot: null,
      definition_hash: r.w_definition_hash ?? null,
      actor_snapshot: r.w_actor_snapshot ?? null,
      owner_id: r.w_owner_id ?? null,
      data_region: r.w_data_region ?? null,
      parent_workflow_id: r.w_parent_workflow_id ?? null,
      idempotency_key: r.w_idempotency_key ?? null,
      version: r.w_version!,
      metadata: r.w_metadata!,
      created_at: r.w_created_at!,
      updated_at: r.w_updated_at!,
    });
  return task;
}
