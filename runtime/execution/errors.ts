/**
 * Engine errors with stable codes. Step failures carry the step name; errors the caller
 * caused (wrong state, unknown type) say what would have been valid.
 */
import { SaffronError, type SaffronErrorOptions } from '../errors.js';

/** Every code a {@link WorkflowError} can carry (the API maps each to a status). */
export const WORKFLOW_ERROR_CODES = [
  'WORKFLOW_NOT_FOUND',
  'UNKNOWN_WORKFLOW_TYPE',
  'WORKFLOW_NOT_ACTIVE',
  'WORKFLOW_NOT_WAITING',
  'WORKFLOW_NOT_RETRYABLE',
  'WORKFLOW_TERMINAL',
  'WORKFLOW_NOT_PAUSED',
  'SNAPSHOT_INVALID',
  'INVALID_INPUT',
  'UNKNOWN_STEP',
] as const;
/** Codes of {@link WorkflowError}. */
export type WorkflowErrorCode = (typeof WORKFLOW_ERROR_CODES)[number];

/** A request the workflow's current state does not allow, or that names nothing known. */
export class WorkflowError extends SaffronError {
  override readonly name = 'WorkflowError';
  declare readonly code: WorkflowErrorCode;
  constructor(code: WorkflowErrorCode, message: string, options: SaffronErrorOptions = {}) {
    super(code, message, options);
  }
}

/** Every code a {@link StepError} can carry. */
export const STEP_ERROR_CODES = [
  'STEP_FUNCTION_FAILED',
  'STEP_RESULT_INVALID',
  'JUMP_TARGET_UNKNOWN',
  'DECISION_NO_ROUTE',
  'EXPRESSION_TYPE_MISMATCH',
  'LOOP_SOURCE_INVALID',
  'LOOP_BODY_UNSUPPORTED',
  'SUB_WORKFLOW_FAILED',
  'STEP_KIND_UNAVAILABLE',
  'STEP_INPUT_INVALID',
  'HUMAN_INPUT_TIMEOUT',
  'AI_INFERENCE_FAILED',
  'TASK_LOST',
] as const;
/** Codes of {@link StepError}. */
export type StepErrorCode = (typeof STEP_ERROR_CODES)[number];

/** Why a step failed; recorded in the audit log and the workflow's snapshot. */
export class StepError extends SaffronError {
  override readonly name = 'StepError';
  constructor(
    code: StepErrorCode,
    readonly stepName: string,
    message: string,
    options: SaffronErrorOptions = {},
  ) {
    super(code, message, { ...options, details: { step: stepName, ...options.details } });
  }
}

/** Thrown by a fault hook to simulate a crash at a named point (tests only pass such a hook). */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}
