/**
 * Persistence: one Kysely query layer over PostgreSQL, PGlite and SQLite, with small
 * operations grouped by concern.
 */
export { executeCached } from './cachedQuery.js';
export type { Codec } from './codec.js';
export type { Database } from './database.js';
export {
  ConflictError,
  StoreConfigError,
  StoreError,
  StoreUnavailableError,
  translateDriverError,
} from './errors.js';
export { openStore, type OpenStoreOptions } from './openStore.js';
export type { PostgresStoreOptions } from './postgres/openPostgresStore.js';
export type { Store, StoreDriver, StoreHandle, TransactionOptions } from './store.js';
export {
  describeStoreTarget,
  parseStoreTarget,
  redactUrl,
  STORE_DIALECTS,
  type StoreDialect,
  type StoreTarget,
} from './target.js';
export {
  currentMigration,
  migrate,
  MigrationFailedError,
  pendingMigrations,
  UnknownMigrationError,
  type MigrationProgress,
  type MigrationResult,
} from './migrate/migrate.js';
export { migrationChecksum, type Migration } from './migrate/migration.js';
export { ensureEdgeSchema } from './sqlite/ensureEdgeSchema.js';
export { SAF_BACKLOG_TOTALS_KEY } from './sqlite/safBacklogTotals.js';
export {
  checkpointWal,
  setWalAutocheckpoint,
  sqliteChangeCount,
  type WalCheckpointResult,
} from './sqlite/walCheckpoint.js';
export { validateSchema, type SchemaValidation } from './validateSchema.js';
export { collectStats, type StoreStats } from './collectStats.js';
export type { NewWorkflow, NewWorkflowRow, WorkflowRecord } from './workflows/record.js';
export { insertWorkflow } from './workflows/insertWorkflow.js';
export { upsertWorkflow } from './workflows/upsertWorkflow.js';
export { updateWorkflow, type WorkflowChanges } from './workflows/updateWorkflow.js';
export { getWorkflow, getWorkflowByIdempotencyKey } from './workflows/getWorkflow.js';
export { listWorkflows, type WorkflowFilter } from './workflows/listWorkflows.js';
export { deleteWorkflow } from './workflows/deleteWorkflow.js';
export { appendAuditEvents, type AuditEvent } from './audit/appendAuditEvents.js';
export { listAuditEvents, type StoredAuditEvent } from './audit/listAuditEvents.js';
export { beatHeartbeat, type Heartbeat } from './heartbeats/beatHeartbeat.js';
export { listStaleHeartbeats, type StaleHeartbeat } from './heartbeats/listStaleHeartbeats.js';
export { insertTasks, type NewTask } from './tasks/insertTasks.js';
export { listTasks, type TaskRecord } from './tasks/listTasks.js';
export { appendStepLogs, type StepLog } from './observations/appendStepLogs.js';
export { recordMetrics, type WorkflowMetric } from './observations/recordMetrics.js';
export { recordCompensation, type CompensationEntry } from './observations/recordCompensation.js';
export { deleteHeartbeat } from './heartbeats/deleteHeartbeat.js';
export { insertTimer, type NewTimer } from './timers/insertTimer.js';
export { settleTimers } from './timers/settleTimers.js';
export {
  getScheduledWorkflow,
  upsertScheduledWorkflow,
  type ScheduledWorkflow,
  type StoredSchedule,
} from './schedules/upsertScheduledWorkflow.js';
export { updateWorkflows, type WorkflowRowUpdate } from './workflows/updateWorkflows.js';
export { beatHeartbeats, deleteHeartbeats } from './heartbeats/beatHeartbeats.js';
export { refreshHeartbeats, takeOverHeartbeat } from './heartbeats/refreshHeartbeats.js';
export { insertWorkflows } from './workflows/insertWorkflows.js';
export { commitSteps } from './workflows/commitSteps.js';
export type { StepCommit } from './workflows/stepCommit.js';
export { writeStepRows } from './workflows/writeStepRows.js';
export { claimTasks, type TaskClaim } from './tasks/claimTasks.js';
export type { ClaimedTask } from './tasks/claimedTask.js';
export { failUnfinishedTasks } from './tasks/failUnfinishedTasks.js';
export { finishTask, type TaskFinish } from './tasks/finishTask.js';
export { listTaskGroup } from './tasks/listTaskGroup.js';
export { lockTaskGroup } from './tasks/lockTaskGroup.js';
export { releaseExpiredTasks } from './tasks/releaseExpiredTasks.js';
export {
  keepTaskClaims,
  registerWorker,
  releaseDeadWorkers,
  touchWorker,
  type HeldClaims,
  type WorkerNode,
} from './workers/registerWorker.js';
export { withAdvisoryLock } from './postgres/leadership.js';
export { listenForTasks, notifyTasks, TASKS_CHANNEL } from './postgres/taskNotifications.js';
export { fireTimer, listDueTimers, type DueTimer } from './timers/listDueTimers.js';
export { nextTimerDue } from './timers/nextTimerDue.js';
export { advanceSchedule, listDueSchedules } from './schedules/dueSchedules.js';
export {
  listScheduledWorkflows,
  type ScheduleListing,
} from './schedules/listScheduledWorkflows.js';
export { deleteScheduledWorkflow } from './schedules/deleteScheduledWorkflow.js';
export { getHeartbeat } from './heartbeats/getHeartbeat.js';
export {
  listWorkflowDefinitions,
  saveWorkflowDefinition,
  type StoredDefinition,
} from './definitions/workflowDefinitions.js';
export type { WasmComponent } from './wasm/record.js';
export { insertWasmComponent, type NewWasmComponent } from './wasm/insertWasmComponent.js';
export { getWasmComponent } from './wasm/getWasmComponent.js';
export { listWasmComponents } from './wasm/listWasmComponents.js';
export { putCachedWasm } from './wasm/putCachedWasm.js';
export { getCachedWasm, touchCachedWasm } from './wasm/getCachedWasm.js';
export { listCachedWasm, type CachedWasm } from './wasm/listCachedWasm.js';
export { DEVICE_COLUMNS, type DeviceRecord } from './devices/device.js';
export { insertDevice, type NewDevice } from './devices/insertDevice.js';
export { getDevice } from './devices/getDevice.js';
export {
  getDevicesCredentials,
  type SealedDeviceCredentials,
} from './devices/getDeviceCredentials.js';
export { listDevices, type DeviceFilter } from './devices/listDevices.js';
export { updateDevice, type DeviceChanges } from './devices/updateDevice.js';
export { deleteDevice } from './devices/deleteDevice.js';
export {
  getDeviceSecret,
  rotateDeviceSecret,
  type SecretRotation,
} from './devices/rotateDeviceSecret.js';
export { recordDeviceMetrics, type DeviceMetricsReport } from './devices/recordDeviceMetrics.js';
export type { RegistrationKeyRecord } from './registrationKeys/registrationKey.js';
export {
  insertRegistrationKey,
  type NewRegistrationKey,
} from './registrationKeys/insertRegistrationKey.js';
export { listRegistrationKeys } from './registrationKeys/listRegistrationKeys.js';
export { revokeRegistrationKey } from './registrationKeys/revokeRegistrationKey.js';
export { consumeRegistrationKey } from './registrationKeys/consumeRegistrationKey.js';
export { DEVICE_CONFIG_NAME, type ConfigLayerRecord } from './configs/configLayer.js';
export { publishConfig, type LayerStamp, type NewConfigLayer } from './configs/publishConfig.js';
export { getConfigLayer } from './configs/getConfigLayer.js';
export { getDeviceConfigLayers } from './configs/getDeviceConfigLayers.js';
export type { PolicyRecord } from './policies/policy.js';
export { insertPolicy, type NewPolicy } from './policies/insertPolicy.js';
export { addPolicyVersion, type PolicyRevision } from './policies/addPolicyVersion.js';
export { getPolicy } from './policies/getPolicy.js';
export { listPolicies, type PolicyFilter } from './policies/listPolicies.js';
export { listPolicyVersions } from './policies/listPolicyVersions.js';
export { setPolicyEnabled } from './policies/setPolicyEnabled.js';
export { deletePolicy } from './policies/deletePolicy.js';
export { selectFraudPolicies, type FraudPolicySelection } from './policies/selectFraudPolicies.js';
export type { AssignmentRecord } from './assignments/assignment.js';
export { insertAssignment, type NewAssignment } from './assignments/insertAssignment.js';
export { listAssignments } from './assignments/listAssignments.js';
export { deleteAssignment } from './assignments/deleteAssignment.js';
export {
  insertSafTransactions,
  type NewSafTransaction,
  type SafBatchResult,
  type SafInsertOutcome,
} from './saf/insertSafTransactions.js';
export { findSequenceGaps, type SequenceGap } from './saf/findSequenceGaps.js';
export {
  EDGE_SUMMARY_SOURCE,
  storeEdgeSummaries,
  type SummaryOutcome,
} from './workflows/storeEdgeSummaries.js';
export { lockDeviceStatus, type LockedDeviceStatus } from './deviceStatus/lockDeviceStatus.js';
export { saveDeviceStatus, type DeviceStatusChange } from './deviceStatus/saveDeviceStatus.js';
export {
  lockDeviceStatuses,
  type LockedDevicePresence,
} from './deviceStatus/lockDeviceStatuses.js';
export { saveDeviceStatuses, type DeviceStatusRow } from './deviceStatus/saveDeviceStatuses.js';
export { listStaleDevices } from './deviceStatus/listStaleDevices.js';
export {
  COMMAND_AUDIT_EVENTS,
  CONTROL_AUDIT_EVENTS,
  type ControlAuditEvent,
  EXPIRED_ERROR,
  MAX_RETRIES_ERROR,
  SYSTEM_ACTOR,
  type CommandActor,
  type CommandAuditEvent,
  type CommandRecord,
} from './commands/command.js';
export {
  insertCommand,
  insertCommands,
  insertCommandWith,
  type CommandCreation,
  type NewCommand,
} from './commands/insertCommand.js';
export { appendCommandAudit, type CommandAuditEntry } from './commands/appendCommandAudit.js';
export {
  deliverCommands,
  deliverToDevices,
  type DeliveryChannel,
  type DeliveryRequest,
} from './commands/deliverCommands.js';
export {
  redeliverCommands,
  redeliverToDevices,
  type RedeliveryRequest,
} from './commands/redeliverCommands.js';
export {
  ackCommand,
  ackCommands,
  type AckOutcome,
  type AckRequest,
  type CommandAck,
} from './commands/ackCommands.js';
export { listCommands, type CommandFilter } from './commands/listCommands.js';
export { expireCommands, type ExpiredCommand } from './commands/expireCommands.js';
export {
  retryUnackedCommands,
  type RetriedCommand,
  type RetryBackoff,
} from './commands/retryUnackedCommands.js';
export { listNewlyDueDevices } from './commands/listNewlyDueDevices.js';
export {
  COMMANDS_CHANNEL,
  notifyCommands,
  parseCommandNotification,
  type CommandNotification,
} from './postgres/commandNotifications.js';
export {
  CHANGES_CHANNEL,
  notifyChange,
  parseChange,
  type CacheChange,
} from './postgres/changeNotifications.js';
export { rememberNonce } from './nonces/rememberNonce.js';
export { rememberNonces, type UsedNonce } from './nonces/rememberNonces.js';
export { listNonces } from './nonces/listNonces.js';
export {
  createChannelListener,
  type ChannelHandlers,
  type ChannelListener,
  type ChannelListenerOptions,
} from './postgres/listenChannel.js';
export {
  listenForNonces,
  notifyNonces,
  NONCES_CHANNEL,
  type NonceListenerOptions,
} from './postgres/nonceNotifications.js';
export { purgeNonces } from './nonces/purgeNonces.js';
export {
  CANCELLED_ERROR,
  cancelPendingCommands,
  type CancelledCommand,
  type CancelScope,
} from './commands/cancelPendingCommands.js';
export {
  BATCH_EXECUTION_MODES,
  type BatchExecutionMode,
  type BatchRecord,
} from './batches/batch.js';
export { insertBatch, type NewBatch } from './batches/insertBatch.js';
export { getBatch } from './batches/getBatch.js';
export { lockBatch } from './batches/lockBatch.js';
export { saveBatch, type BatchChanges } from './batches/saveBatch.js';
export { listActiveBatchIds, listBatches, type BatchFilter } from './batches/listBatches.js';
export {
  insertBatchCommands,
  type BatchCommandsInserted,
  type NewBatchCommand,
} from './batches/insertBatchCommands.js';
export { listBatchCommandStatuses } from './batches/listBatchCommandStatuses.js';
export type { BroadcastRecord } from './broadcasts/broadcast.js';
export { type DeviceTargetFilter } from './broadcasts/deviceFilter.js';
export { countTargetDevices } from './broadcasts/countTargetDevices.js';
export {
  launchBroadcastPhase,
  type BroadcastPhaseLaunch,
} from './broadcasts/launchBroadcastPhase.js';
export {
  countBroadcastCommands,
  type BroadcastCommandCount,
} from './broadcasts/countBroadcastCommands.js';
export { insertBroadcast, type NewBroadcast } from './broadcasts/insertBroadcast.js';
export { getBroadcast } from './broadcasts/getBroadcast.js';
export { lockBroadcast } from './broadcasts/lockBroadcast.js';
export { saveBroadcast, type BroadcastChanges } from './broadcasts/saveBroadcast.js';
export {
  listActiveBroadcastIds,
  listBroadcasts,
  type BroadcastFilter,
} from './broadcasts/listBroadcasts.js';
export {
  listBroadcastDevices,
  type BroadcastDeviceFilter,
  type BroadcastDeviceOutcome,
} from './broadcasts/listBroadcastDevices.js';
export type { TemplateRecord } from './templates/template.js';
export { insertTemplate, type NewTemplate } from './templates/insertTemplate.js';
export { getTemplate } from './templates/getTemplate.js';
export { listTemplates, type TemplateFilter } from './templates/listTemplates.js';
export type { CommandScheduleRecord } from './commandSchedules/commandSchedule.js';
export {
  insertCommandSchedule,
  type NewCommandSchedule,
} from './commandSchedules/insertCommandSchedule.js';
export { getCommandSchedule } from './commandSchedules/getCommandSchedule.js';
export {
  listCommandSchedules,
  listDueCommandSchedules,
  type CommandScheduleFilter,
} from './commandSchedules/listCommandSchedules.js';
export {
  setCommandScheduleStatus,
  type CommandScheduleStatusChange,
} from './commandSchedules/setCommandScheduleStatus.js';
export { claimScheduleRun, type ScheduleAdvance } from './commandSchedules/claimScheduleRun.js';
export {
  insertScheduleExecution,
  listScheduleExecutions,
  type ScheduleExecutionRecord,
  type ScheduleExecutionStatus,
} from './commandSchedules/scheduleExecutions.js';
export { findMissingDevices } from './devices/findMissingDevices.js';
export * from './commandVersions/index.js';
export * from './authorization/index.js';
export * from './approvals/index.js';
export * from './rateLimits/index.js';
export * from './webhooks/index.js';
export * from './commandAudit/index.js';
export * from './retention/index.js';
