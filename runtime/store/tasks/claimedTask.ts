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

/** A tasks row as a claim returns it, with its workflow row as JSON where the dialect has it. */
export type ClaimedRow = Pick<Selectable<TasksTable>, (typeof CLAIMED_COLUMNS)[number]> & {
  workflow?: unknown;
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
  if (r.workflow)
    task.workflow = rowToWorkflow(
      codec,
      codec.parseJson(r.workflow) as Selectable<WorkflowExecutionsTable>,
    );
  return task;
}
