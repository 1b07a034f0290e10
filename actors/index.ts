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
  type SettledHook,
  type SettledWorkflow,
  type StartManyOptions,
  type StartOptions,
} from './runtime/createRuntime.js';
export {
  createWorkflowRegistry,
  type WorkflowRegistry,
  type WorkflowRegistryOptions,
} from './runtime/registry.js';
export { taskBackoffMs, type TaskRunOptions } from './runtime/tasks.js';
export type { MaintenanceOptions, MaintenanceReport } from './runtime/maintenance.js';
export type { ServeOptions, Service } from './runtime/serve.js';
export {
  auditEventJson,
  workflowError,
  workflowJson,
  type WorkflowErrorInfo,
} from './runtime/present.js';
export {
  deviceMachine,
  DEVICE_STATE_STATUS,
  type DeviceMachineContext,
} from './device/deviceMachine.js';
export { devEvents, type DeviceEvent } from './device/events.js';
export {
  deviceStatusOf,
  nextDeviceSnapshot,
  persistDeviceSnapshot,
  restoreDeviceSnapshot,
  type DeviceSnapshot,
  type PersistedDeviceSnapshot,
} from './device/snapshot.js';
export { applyDeviceEvent, type DeviceStatusUpdate } from './device/host.js';
