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
  describeStatechart,
  type Statechart,
  type StatechartEdge,
  type StatechartNode,
} from './workflow/statechart.js';
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
  type StateGuard,
  type SettledWorkflow,
  type StartManyOptions,
  type StartOptions,
} from './runtime/createRuntime.js';
export {
  POSTGRES_COMMIT_BATCH,
  POSTGRES_COMMITS_IN_FLIGHT,
  type StepDurability,
} from './runtime/groupCommitQueue.js';
export {
  INSPECT_PROTOCOL_VERSION,
  INSPECTION_MESSAGE_TYPES,
  type ActorMessage,
  type EventMessage,
  type InspectedEvent,
  type InspectedSnapshot,
  type InspectionMessage,
  type InspectionMessageType,
  type InspectionObserver,
  type SnapshotMessage,
} from './inspect/protocol.js';
export {
  createWebSocketInspector,
  type WebSocketInspector,
  type WebSocketInspectorOptions,
} from './inspect/webSocketInspector.js';
export { InspectError, parseInspectUrl } from './inspect/inspectUrl.js';
export { redactForInspection } from './inspect/redact.js';
export type { InspectOption, InspectOptions } from './inspect/inspectOption.js';
export { createBatchQueue, type BatchQueueOptions } from './runtime/batchQueue.js';
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
export {
  BATCH_ITEM_STATUSES,
  batchMachine,
  releaseItems,
  type BatchCommandSpec,
  type BatchItem,
  type BatchItemStatus,
  type BatchMachineContext,
} from './batch/batchMachine.js';
export { batchEvents, type BatchCommandUpdate, type BatchEvent } from './batch/events.js';
export {
  BatchSnapshotError,
  batchProgress,
  batchStatusOf,
  initialBatchSnapshot,
  nextBatchSnapshot,
  persistBatchSnapshot,
  restoreBatchSnapshot,
  type BatchProgress,
  type BatchSnapshot,
  type BatchStatus,
  type PersistedBatchSnapshot,
} from './batch/snapshot.js';
export {
  broadcastMachine,
  type BroadcastHaltReason,
  type BroadcastMachineContext,
  type BroadcastPhaseRecord,
  type BroadcastPhaseStats,
} from './broadcast/broadcastMachine.js';
export { bcEvents, type BroadcastEvent } from './broadcast/events.js';
export {
  BroadcastSnapshotError,
  broadcastStatusOf,
  initialBroadcastSnapshot,
  nextBroadcastSnapshot,
  persistBroadcastSnapshot,
  restoreBroadcastSnapshot,
  type BroadcastSnapshot,
  type BroadcastStatus,
  type PersistedBroadcastSnapshot,
} from './broadcast/snapshot.js';
