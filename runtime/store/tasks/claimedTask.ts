/** A task a worker has claimed: everything it needs to run it. */
import type { Selectable } from 'kysely';
import type { JsonObject } from '../../model/json.js';
import type { Codec } from '../codec.js';
import type { TasksTable } from '../database.js';

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
}

/** Decode a tasks row. */
export function rowToClaimedTask(codec: Codec, r: Selectable<TasksTable>): ClaimedTask {
  return {
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
}
