/** The workflow record as the runtime sees it, and its mapping to and from a row. */
import type { Selectable } from 'kysely';
import type { JsonObject } from '../../model/json.js';
import type { WorkflowStatus } from '../../model/statuses.js';
import type { Codec } from '../codec.js';
import type { WorkflowExecutionsTable } from '../database.js';

/** One workflow as stored in workflow_executions. */
export interface WorkflowRecord {
  id: string;
  workflowType: string;
  workflowVersion: string | null;
  status: WorkflowStatus;
  currentStepIndex: number;
  currentStep: string | null;
  state: JsonObject;
  definitionSnapshot: JsonObject | null;
  definitionHash: string | null;
  actorSnapshot: JsonObject | null;
  ownerId: string | null;
  dataRegion: string | null;
  parentWorkflowId: string | null;
  idempotencyKey: string | null;
  /** Optimistic-concurrency version, incremented by every update. */
  version: number;
  metadata: JsonObject;
  createdAt: Date;
  updatedAt: Date;
}

/** What a caller supplies to create a workflow; the rest has defaults. */
export type NewWorkflow = Pick<WorkflowRecord, 'id' | 'workflowType' | 'status' | 'state'> &
  Partial<Omit<WorkflowRecord, 'id' | 'workflowType' | 'status' | 'state' | 'version'>>;

/**
 * A workflow to insert, at `version` when given (0 otherwise): a creation written together
 * with the commits that followed it, as one row in the state the last one left it.
 */
export type NewWorkflowRow = NewWorkflow & { version?: number };

/** Row values for an insert of `workflow`. */
export function workflowToRow(codec: Codec, workflow: NewWorkflow, version: number, now: Date) {
  const json = (value: JsonObject | null | undefined) => (value == null ? null : codec.json(value));
  return {
    id: workflow.id,
    workflow_type: workflow.workflowType,
    workflow_version: workflow.workflowVersion ?? null,
    status: workflow.status,
    current_step_index: workflow.currentStepIndex ?? 0,
    current_step: workflow.currentStep ?? null,
    state: codec.json(workflow.state),
    definition_snapshot: json(workflow.definitionSnapshot),
    definition_hash: workflow.definitionHash ?? null,
    actor_snapshot: json(workflow.actorSnapshot),
    owner_id: workflow.ownerId ?? null,
    data_region: workflow.dataRegion ?? null,
    parent_workflow_id: workflow.parentWorkflowId ?? null,
    idempotency_key: workflow.idempotencyKey ?? null,
    version,
    metadata: codec.json(workflow.metadata ?? {}),
    created_at: codec.time(workflow.createdAt ?? now),
    updated_at: codec.time(workflow.updatedAt ?? now),
  };
}

/** Decode a workflow_executions row. */
export function rowToWorkflow(
  codec: Codec,
  row: Selectable<WorkflowExecutionsTable>,
): WorkflowRecord {
  return {
    id: row.id,
    workflowType: row.workflow_type,
    workflowVersion: row.workflow_version,
    status: row.status as WorkflowStatus,
    currentStepIndex: row.current_step_index,
    currentStep: row.current_step,
    state: codec.parseJson(row.state) as JsonObject,
    definitionSnapshot: (codec.parseJson(row.definition_snapshot) as JsonObject | null) ?? null,
    definitionHash: row.definition_hash,
    actorSnapshot: (codec.parseJson(row.actor_snapshot) as JsonObject | null) ?? null,
    ownerId: row.owner_id,
    dataRegion: row.data_region,
    parentWorkflowId: row.parent_workflow_id,
    idempotencyKey: row.idempotency_key,
    version: codec.parseInt(row.version),
    metadata: codec.parseJson(row.metadata) as JsonObject,
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}
