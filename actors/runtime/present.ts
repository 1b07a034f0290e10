/**
 * Workflows and audit events as JSON objects, shared by the CLI (`--json`) and the HTTP API.
 * Keys are the database's snake_case column names, so output and SQL read the same.
 */
import type { StoredAuditEvent, WorkflowRecord } from '../../runtime/index.js';

/** The error a failed workflow ended with, from its actor snapshot. */
export interface WorkflowErrorInfo {
  code: string | null;
  message: string | null;
  step: string | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The error recorded in the workflow's actor snapshot, if any. */
export function workflowError(record: WorkflowRecord): WorkflowErrorInfo | null {
  const context: unknown = record.actorSnapshot?.context;
  if (!isObject(context) || !isObject(context.error)) return null;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const { code, message, step } = context.error;
  return { code: text(code), message: text(message), step: text(step) };
}

/** A workflow as a JSON object; `error` is present only when the workflow has one. */
export function workflowJson(record: WorkflowRecord): Record<string, unknown> {
  const error = workflowError(record);
  return {
    id: record.id,
    workflow_type: record.workflowType,
    workflow_version: record.workflowVersion,
    status: record.status,
    current_step: record.currentStep,
    current_step_index: record.currentStepIndex,
    state: record.state,
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
    ...(record.parentWorkflowId ? { parent_workflow_id: record.parentWorkflowId } : {}),
    ...(error ? { error } : {}),
  };
}

/** An audit event as a JSON object. */
export function auditEventJson(event: StoredAuditEvent): Record<string, unknown> {
  return {
    timestamp: event.timestamp.toISOString(),
    event_type: event.eventType,
    step_name: event.stepName,
    data: event.eventData,
  };
}
