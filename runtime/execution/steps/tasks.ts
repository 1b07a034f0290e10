/**
 * ASYNC and PARALLEL: the step queues its task(s) in its own commit and the workflow waits in
 * PENDING_ASYNC; workers run them, and the completion of the last one merges the results (in
 * declaration order, with the step's merge rules) and resumes the workflow.
 */
import type { AsyncStep, ParallelStep } from '../../definition/index.js';
import type { StepResult, StepRun } from '../run.js';

/** Queue an ASYNC step's function as one task. */
export function executeAsync(step: AsyncStep, run: StepRun): StepResult {
  return {
    kind: 'dispatch',
    state: run.state,
    tasks: [{ name: step.name, functionPath: step.function }],
  };
}

/** Queue every task of a PARALLEL step at once. */
export function executeParallel(step: ParallelStep, run: StepRun): StepResult {
  return {
    kind: 'dispatch',
    state: run.state,
    tasks: step.tasks.map((t) => ({ name: t.name, functionPath: t.function_path })),
    ...(step.timeout_seconds === undefined
      ? {}
      : { timeoutAt: new Date(run.clock.now().getTime() + step.timeout_seconds * 1000) }),
  };
}
