/**
 * Kysely table types of the tables the runtime queries. Writes send JSON and timestamps as
 * text (see codec.ts); reads return whatever the dialect returns and are decoded by the
 * operation that reads them.
 */
import type { ColumnType, Generated } from 'kysely';
import type {
  ApiTokensTable,
  CommandAuditLogTable,
  CommandBatchesTable,
  CommandBroadcastsTable,
  CommandSchedulesTable,
  CommandTemplatesTable,
  DeviceAssignmentsTable,
  DeviceCommandsTable,
  DeviceConfigsTable,
  DeviceRequestNoncesTable,
  EdgeDevicesTable,
  PoliciesTable,
  RegistrationKeysTable,
  SafTransactionsTable,
  ScheduleExecutionsTable,
  WorkflowDefinitionsTable,
} from './cloudTables.js';
import type {
  ApprovalResponsesTable,
  AuthorizationPoliciesTable,
  AuthorizationRolesTable,
  CommandApprovalsTable,
  CommandChangelogTable,
  CommandVersionsTable,
  RateLimitRulesTable,
  RateLimitTrackingTable,
  RoleAssignmentsTable,
} from './accessTables.js';
import type {
  DeviceConfigCacheTable,
  DeviceWasmCacheTable,
  EdgeSyncStateTable,
  EdgeWorkflowCacheTable,
  SafPendingTransactionsTable,
} from './edgeTables.js';
import type {
  AuditRetentionPoliciesTable,
  WebhookDeliveriesTable,
  WebhookRegistrationsTable,
} from './webhookTables.js';

/** JSONB (cloud) or JSON text (edge): written as text, read raw. */
export type JsonColumn = ColumnType<unknown, string, string>;
/** Nullable JSON column. */
export type NullableJsonColumn = ColumnType<unknown, string | null | undefined, string | null>;
/** Timestamp with a database default. */
export type DefaultTime = ColumnType<unknown, string | undefined, string>;
/** Nullable timestamp. */
export type NullableTime = ColumnType<unknown, string | null | undefined, string | null>;
/** JSON column with a database default. */
export type DefaultJson = ColumnType<unknown, string | undefined, string>;
/** Integer with a database default (BIGINT may arrive as string). */
export type DefaultInt = ColumnType<number | string, number | undefined, number>;

/** workflow_executions row. */
export interface WorkflowExecutionsTable {
  id: string;
  workflow_type: string;
  workflow_version: string | null;
  status: string;
  current_step_index: number;
  current_step: string | null;
  state: JsonColumn;
  definition_snapshot: NullableJsonColumn;
  definition_hash: string | null;
  actor_snapshot: NullableJsonColumn;
  owner_id: string | null;
  data_region: string | null;
  parent_workflow_id: string | null;
  idempotency_key: string | null;
  version: DefaultInt;
  metadata: DefaultJson;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}

/** workflow_audit_log row. */
export interface WorkflowAuditLogTable {
  id: Generated<number>;
  workflow_id: string;
  event_type: string;
  step_name: string | null;
  event_data: DefaultJson;
  timestamp: DefaultTime;
}

/** workflow_execution_logs row. */
export interface WorkflowExecutionLogsTable {
  id: Generated<number>;
  workflow_id: string;
  step_name: string | null;
  level: ColumnType<string, string | undefined, string>;
  message: string;
  data: DefaultJson;
  logged_at: DefaultTime;
}

/** workflow_metrics row. */
export interface WorkflowMetricsTable {
  id: Generated<number>;
  workflow_id: string;
  workflow_type: string | null;
  step_name: string | null;
  metric_name: string;
  metric_value: number;
  unit: string | null;
  tags: DefaultJson;
  recorded_at: DefaultTime;
}

/** workflow_heartbeats row. */
export interface WorkflowHeartbeatsTable {
  workflow_id: string;
  worker_id: string;
  last_heartbeat: DefaultTime;
  current_step: string | null;
  step_started_at: NullableTime;
  metadata: DefaultJson;
}

/** tasks row. */
export interface TasksTable {
  id: string;
  workflow_id: string;
  step_name: string;
  function_path: string;
  state: JsonColumn;
  context: JsonColumn;
  status: ColumnType<string, string | undefined, string>;
  worker_id: string | null;
  claimed_at: NullableTime;
  completed_at: NullableTime;
  result: NullableJsonColumn;
  error: string | null;
  parallel_group: string | null;
  task_index: number | null;
  data_region: string | null;
  attempts: DefaultInt;
  max_attempts: DefaultInt;
  run_after: DefaultTime;
  lease_expires_at: NullableTime;
  created_at: DefaultTime;
}

/** compensation_log row. */
export interface CompensationLogTable {
  id: Generated<number>;
  workflow_id: string;
  step_name: string;
  compensation_function: string;
  status: string;
  state_before: NullableJsonColumn;
  state_after: NullableJsonColumn;
  error: string | null;
  executed_at: DefaultTime;
}

/** workflow_timers row. */
export interface WorkflowTimersTable {
  id: string;
  workflow_id: string;
  timer_kind: string;
  step_name: string | null;
  due_at: ColumnType<unknown, string, string>;
  payload: DefaultJson;
  status: ColumnType<string, string | undefined, string>;
  created_at: DefaultTime;
}

/** scheduled_workflows row. */
export interface ScheduledWorkflowsTable {
  id: string;
  schedule_name: string;
  cron_expression: string;
  timezone: ColumnType<string, string | undefined, string>;
  target_workflow_type: string;
  initial_data_template: DefaultJson;
  status: ColumnType<string, string | undefined, string>;
  source_workflow_id: string | null;
  last_run_at: NullableTime;
  next_run_at: NullableTime;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}

/** wasm_components row (cloud registry of WebAssembly binaries). */
export interface WasmComponentsTable {
  id: string;
  name: string;
  version_tag: string;
  binary_hash: string;
  blob_storage_path: string;
  description: string | null;
  input_schema: string | null;
  output_schema: string | null;
  size_bytes: ColumnType<number | string | null, number | null | undefined, number | null>;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}

/**
 * The engine's tables, on both tiers: what `StoreHandle.db` can query. A table of one tier
 * only is reached through the tier's own view (`CloudHandle.cloud`, `EdgeHandle.edge`), so a
 * query on a table the store does not have fails to compile.
 */
export interface CoreDatabase {
  workflow_executions: WorkflowExecutionsTable;
  workflow_audit_log: WorkflowAuditLogTable;
  workflow_execution_logs: WorkflowExecutionLogsTable;
  workflow_metrics: WorkflowMetricsTable;
  workflow_heartbeats: WorkflowHeartbeatsTable;
  tasks: TasksTable;
  compensation_log: CompensationLogTable;
  workflow_timers: WorkflowTimersTable;
  scheduled_workflows: ScheduledWorkflowsTable;
}

/** The terminal's own tables (SQLite). */
export interface EdgeTables {
  device_wasm_cache: DeviceWasmCacheTable;
  saf_pending_transactions: SafPendingTransactionsTable;
  device_config_cache: DeviceConfigCacheTable;
  edge_sync_state: EdgeSyncStateTable;
  edge_workflow_cache: EdgeWorkflowCacheTable;
}

/** The control plane's own tables (PostgreSQL, PGlite). */
export interface CloudTables {
  edge_devices: EdgeDevicesTable;
  device_commands: DeviceCommandsTable;
  api_tokens: ApiTokensTable;
  device_configs: DeviceConfigsTable;
  policies: PoliciesTable;
  device_assignments: DeviceAssignmentsTable;
  saf_transactions: SafTransactionsTable;
  command_audit_log: CommandAuditLogTable;
  registration_keys: RegistrationKeysTable;
  device_request_nonces: DeviceRequestNoncesTable;
  workflow_definitions: WorkflowDefinitionsTable;
  wasm_components: WasmComponentsTable;
  command_batches: CommandBatchesTable;
  command_broadcasts: CommandBroadcastsTable;
  command_templates: CommandTemplatesTable;
  command_schedules: CommandSchedulesTable;
  schedule_executions: ScheduleExecutionsTable;
  command_versions: CommandVersionsTable;
  command_changelog: CommandChangelogTable;
  authorization_roles: AuthorizationRolesTable;
  role_assignments: RoleAssignmentsTable;
  authorization_policies: AuthorizationPoliciesTable;
  command_approvals: CommandApprovalsTable;
  approval_responses: ApprovalResponsesTable;
  rate_limit_rules: RateLimitRulesTable;
  rate_limit_tracking: RateLimitTrackingTable;
  webhook_registrations: WebhookRegistrationsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  audit_retention_policies: AuditRetentionPoliciesTable;
}

/** What an edge store can query. */
export type EdgeDatabase = CoreDatabase & EdgeTables;
/** What a cloud store can query. */
export type CloudDatabase = CoreDatabase & CloudTables;
/** Every table of both tiers: the type a store's one Kysely instance is built with. */
export type Database = CoreDatabase & EdgeTables & CloudTables;
