/**
 * Actors: XState v5 machines compiled from workflow definitions, and the runtime that
 * restores, runs, persists and passivates them.
 */
export {
  compileWorkflowMachine,
  FINAL_STATES,
  type CompiledWorkflow,
} from './workflow/compileMachine.js';
export {
  initialContext,
  type SagaEntry,
  type StepErrorInfo,
  type WorkflowMachineContext,
} from './workflow/context.js';
export { wfEvents, type WorkflowEvent } from './workflow/events.js';
export {
  initialWorkflowSnapshot,
  nextWorkflowSnapshot,
  persistWorkflowSnapshot,
  restoreWorkflowSnapshot,
  workflowPosition,
  workflowStatus,
  type PersistedWorkflowSnapshot,
  type WorkflowSnapshot,
} from './workflow/snapshot.js';
export {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
  type StartManyOptions,
  type StartOptions,
} from './runtime/createRuntime.js';
export { createWorkflowRegistry, type WorkflowRegistry } from './runtime/registry.js';
export { taskBackoffMs, type TaskRunOptions } from './runtime/tasks.js';
export type { MaintenanceOptions, MaintenanceReport } from './runtime/maintenance.js';
export type { ServeOptions, Service } from './runtime/serve.js';
