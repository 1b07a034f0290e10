/**
 * The workflow machine's context: the engine's own bookkeeping for one workflow, persisted in
 * its JSON snapshot (never in the user-visible state).
 */

/** A step failure as recorded in the snapshot. */
export interface StepErrorInfo {
  code: string;
  message: string;
  step: string | null;
}

/** A compensation registered by a step that succeeded (saga). */
export interface SagaEntry {
  step: string;
  fn: string;
}

/** Engine bookkeeping carried by the machine. */
export interface WorkflowMachineContext {
  /** Compensations to run, in registration order (run in reverse on failure). */
  saga: SagaEntry[];
  /** How many times each step has been entered: part of step idempotency keys. */
  visits: Record<string, number>;
  /** Attempts already made at the current step visit (HTTP retries). */
  attempt: number;
  /** ISO time when a retrying step is due again. */
  retryAt: string | null;
  /** The sub-workflow being waited for. */
  childId: string | null;
  /** The task group (ASYNC / PARALLEL) being waited for. */
  taskGroup: string | null;
  /** Why the workflow failed. */
  error: StepErrorInfo | null;
  /** The status to return to after an operator pause. */
  pausedFrom: string | null;
}

/** Context of a new workflow. */
export function initialContext(): WorkflowMachineContext {
  return {
    saga: [],
    visits: {},
    attempt: 0,
    retryAt: null,
    childId: null,
    taskGroup: null,
    error: null,
    pausedFrom: null,
  };
}
