/**
 * Persistence: one Kysely query layer over PostgreSQL, PGlite and SQLite, with small
 * operations grouped by concern.
 */
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
export type { Store, StoreDriver, StoreHandle } from './store.js';
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
export { validateSchema, type SchemaValidation } from './validateSchema.js';
export { collectStats, type StoreStats } from './collectStats.js';
export type { NewWorkflow, WorkflowRecord } from './workflows/record.js';
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
export {
  failUnfinishedTasks,
  finishTask,
  listTaskGroup,
  lockTaskGroup,
  releaseExpiredTasks,
  type TaskFinish,
} from './tasks/finishTask.js';
export { registerWorker, touchWorker, type WorkerNode } from './workers/registerWorker.js';
export { withAdvisoryLock } from './postgres/leadership.js';
export { listenForTasks, notifyTasks, TASKS_CHANNEL } from './postgres/taskNotifications.js';
export { fireTimer, listDueTimers, type DueTimer } from './timers/listDueTimers.js';
export { advanceSchedule, listDueSchedules } from './schedules/dueSchedules.js';
export {
  listScheduledWorkflows,
  type ScheduleListing,
} from './schedules/listScheduledWorkflows.js';
export { deleteScheduledWorkflow } from './schedules/deleteScheduledWorkflow.js';
export { getHeartbeat } from './heartbeats/getHeartbeat.js';
