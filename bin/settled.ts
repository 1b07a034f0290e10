/**
 * The end of `run`, `resume` and `retry`: print the workflow where it settled and turn its
 * status into the exit code. Waiting is success (the workflow is where it should be until
 * someone acts); ending FAILED, FAILED_ROLLED_BACK or CANCELLED is exit 1 with the error.
 */
import type { WorkflowRecord, WorkflowStatus } from '../runtime/index.js';
import { CliExit, type CliIo } from './io.js';
import { workflowError } from '../actors/index.js';
import { printWorkflow } from './printWorkflow.js';

/** Whether a workflow at `status` has not failed (it completed, waits, or is still running). */
export function succeeded(status: WorkflowStatus): boolean {
  // runUntilSettled returns only once a workflow has left ACTIVE; should one still be ACTIVE
  // (driven by another process), it has not failed
  switch (status) {
    case 'ACTIVE':
    case 'COMPLETED':
    case 'WAITING_HUMAN_INPUT':
    case 'PENDING_SUB_WORKFLOW':
    case 'PENDING_ASYNC':
    case 'PAUSED':
      return true;
    case 'FAILED':
    case 'FAILED_ROLLED_BACK':
    case 'CANCELLED':
      return false;
    default: {
      const unknown: never = status;
      throw new Error(`unknown workflow status ${String(unknown)}`);
    }
  }
}

/** `workflow ID ended STATUS at STEP: message`, for a workflow that ended unsuccessfully. */
export function endedMessage(record: WorkflowRecord): string {
  const error = workflowError(record);
  const step = error?.step ?? record.currentStep;
  const at = step ? ` at ${step}` : '';
  const message = error?.message ? `: ${error.message}` : '';
  return `workflow ${record.id} ended ${record.status}${at}${message}`;
}

/** Print the settled workflow; throw exit 1 with its error when it ended unsuccessfully. */
export function reportSettled(io: CliIo, record: WorkflowRecord, json: boolean): void {
  printWorkflow(io, record, json);
  if (succeeded(record.status)) return;
  throw new CliExit(1, endedMessage(record));
}
