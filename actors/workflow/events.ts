/**
 * Events of the workflow machine, built by typed constructors so no event name is a string
 * literal scattered through the engine.
 */
import type { StepErrorInfo } from './context.js';

/** Every event the workflow machine accepts. */
export type WorkflowEvent =
  | { type: 'wf.step.completed'; step: string; compensation?: string }
  | { type: 'wf.step.jumped'; step: string; target: string; compensation?: string }
  | { type: 'wf.step.paused'; step: string }
  | { type: 'wf.step.retry'; step: string; dueAt: string; attempt: number }
  | { type: 'wf.step.failed'; step: string; error: StepErrorInfo }
  | { type: 'wf.human.resumed' }
  | { type: 'wf.child.started'; step: string; childId: string; compensation?: string }
  | { type: 'wf.child.completed'; step: string; compensation?: string }
  | { type: 'wf.tasks.dispatched'; step: string; group: string }
  | { type: 'wf.tasks.completed'; step: string; compensation?: string }
  | { type: 'wf.compensation.recorded' }
  | { type: 'wf.compensated' }
  | { type: 'wf.cancelled' }
  | { type: 'wf.paused'; from: string }
  | { type: 'wf.unpaused' };

/** Constructors for {@link WorkflowEvent}s. */
export const wfEvents = {
  stepCompleted: (step: string, compensation?: string): WorkflowEvent => ({
    type: 'wf.step.completed',
    step,
    ...(compensation ? { compensation } : {}),
  }),
  stepJumped: (step: string, target: string, compensation?: string): WorkflowEvent => ({
    type: 'wf.step.jumped',
    step,
    target,
    ...(compensation ? { compensation } : {}),
  }),
  stepPaused: (step: string): WorkflowEvent => ({ type: 'wf.step.paused', step }),
  stepRetry: (step: string, dueAt: Date, attempt: number): WorkflowEvent => ({
    type: 'wf.step.retry',
    step,
    dueAt: dueAt.toISOString(),
    attempt,
  }),
  stepFailed: (step: string, error: StepErrorInfo): WorkflowEvent => ({
    type: 'wf.step.failed',
    step,
    error,
  }),
  humanResumed: (): WorkflowEvent => ({ type: 'wf.human.resumed' }),
  childStarted: (step: string, childId: string, compensation?: string): WorkflowEvent => ({
    type: 'wf.child.started',
    step,
    childId,
    ...(compensation ? { compensation } : {}),
  }),
  childCompleted: (step: string, compensation?: string): WorkflowEvent => ({
    type: 'wf.child.completed',
    step,
    ...(compensation ? { compensation } : {}),
  }),
  tasksDispatched: (step: string, group: string): WorkflowEvent => ({
    type: 'wf.tasks.dispatched',
    step,
    group,
  }),
  tasksCompleted: (step: string, compensation?: string): WorkflowEvent => ({
    type: 'wf.tasks.completed',
    step,
    ...(compensation ? { compensation } : {}),
  }),
  compensationRecorded: (): WorkflowEvent => ({ type: 'wf.compensation.recorded' }),
  compensated: (): WorkflowEvent => ({ type: 'wf.compensated' }),
  cancelled: (): WorkflowEvent => ({ type: 'wf.cancelled' }),
  paused: (from: string): WorkflowEvent => ({ type: 'wf.paused', from }),
  unpaused: (): WorkflowEvent => ({ type: 'wf.unpaused' }),
};
