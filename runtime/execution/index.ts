/** The step-execution core of the engine: step kinds, directives, executors, injected deps. */
export {
  contextScope,
  createStepLogger,
  stepAbort,
  withSignal,
  withSignalAndLog,
  type StepAbort,
  type StepContext,
  type StepLogger,
} from './context.js';
export {
  FAULT_POINTS,
  randomIds,
  systemClock,
  type Clock,
  type FaultHook,
  type FaultPoint,
  type Ids,
} from './deps.js';
export { timeOrderedIds } from './timeOrderedIds.js';
export {
  readDirective,
  StartSubWorkflowDirective,
  WorkflowJumpDirective,
  WorkflowPauseDirective,
  WorkflowProceedDirective,
  type Directive,
} from './directives.js';
export { jumpTo, pause, proceed, startSubWorkflow } from './directiveHelpers.js';
export {
  SimulatedCrash,
  STEP_ERROR_CODES,
  StepError,
  WORKFLOW_ERROR_CODES,
  WorkflowError,
  type StepErrorCode,
  type WorkflowErrorCode,
} from './errors.js';
export { executeStep } from './executeStep.js';
export { inlineExecutor, type StepExecutor, type StepFunction } from './executor.js';
export { invokeStepFunction, type InvokeResult } from './invoke.js';
export {
  noEffects,
  type ChildWorkflowSpec,
  type ScheduleSpec,
  type StepEffects,
  type StepOutcome,
  type TaskSpec,
} from './outcome.js';
export type { StepResult, StepRun } from './run.js';
export { nextCronRun } from './steps/cronSchedule.js';
export { threadsExecutor, type ThreadsExecutorOptions } from './threadsExecutor.js';
