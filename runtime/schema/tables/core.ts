/**
 * Core workflow tables: one definition shared by the cloud (PostgreSQL) and the edge
 * (SQLite), so workflows and their history sync between the tiers unchanged. Deleting a
 * workflow_executions row cascades to every table below (spec: Resources, item 10).
 */
import {
  COMPENSATION_STATUSES,
  LOG_LEVELS,
  SCHEDULE_STATUSES,
  TASK_STATUSES,
  TIMER_STATUSES,
  WORKFLOW_STATUSES,
} from '../../model/statuses.js';
import {
  createdAt,
  double,
  index,
  integer,
  jsonb,
  metadata,
  serial,
  text,
  timestamptz,
  updatedAt,
  uuid,
  varchar,
} from '../columns.js';
import type { TableDef } from '../model.js';

const WF = 'workflow_executions.id';

/** workflow_executions: one row per workflow (spec columns plus idempotency, version and actor snapshot). */
export const workflowExecutions: TableDef = {
  name: 'workflow_executions',
  tier: 'core',
  purpose: 'one row per workflow: status, state, definition snapshot',
  columns: [
    uuid('id', { pk: true }),
    varchar('workflow_type', 200, { required: true }),
    varchar('workflow_version', 50),
    varchar('status', 50, { required: true, check: WORKFLOW_STATUSES }),
    integer('current_step_index', { required: true }),
    varchar('current_step', 200),
    jsonb('state', { required: true }),
    jsonb('definition_snapshot'),
    varchar('definition_hash', 64),
    jsonb('actor_snapshot'),
    varchar('owner_id', 200),
    varchar('data_region', 100),
    uuid('parent_workflow_id', { references: WF, onDelete: 'SET NULL' }),
    varchar('idempotency_key', 200, { unique: true }),
    integer('version', { default: 0 }),
    metadata(),
    createdAt(),
    updatedAt(),
  ],
  indexes: [
    index('idx_workflow_executions_type', ['workflow_type']),
    index('idx_workflow_executions_status', ['status']),
    index('idx_workflow_executions_owner', ['owner_id']),
    index('idx_workflow_executions_created', ['-created_at']),
    index('idx_workflow_executions_parent', ['parent_workflow_id']),
  ],
};

/** workflow_audit_log: one row per transition (spec: Events). */
export const workflowAuditLog: TableDef = {
  name: 'workflow_audit_log',
  tier: 'core',
  purpose: 'one row per workflow transition',
  columns: [
    serial('id'),
    uuid('workflow_id', { required: true, references: WF }),
    varchar('event_type', 100, { required: true }),
    varchar('step_name', 200),
    jsonb('event_data', { default: {} }),
    timestamptz('timestamp', { default: 'now' }),
  ],
  indexes: [index('idx_workflow_audit_log_workflow', ['workflow_id', 'id'])],
};

/** workflow_execution_logs: what steps log through `context.log`. */
export const workflowExecutionLogs: TableDef = {
  name: 'workflow_execution_logs',
  tier: 'core',
  purpose: 'lines steps log through context.log',
  columns: [
    serial('id'),
    uuid('workflow_id', { required: true, references: WF }),
    varchar('step_name', 200),
    varchar('level', 10, { default: 'info', check: LOG_LEVELS }),
    text('message', { required: true }),
    jsonb('data', { default: {} }),
    timestamptz('logged_at', { default: 'now' }),
  ],
  indexes: [index('idx_workflow_execution_logs_workflow', ['workflow_id', 'id'])],
};

/** workflow_metrics: step durations and other numeric observations. */
export const workflowMetrics: TableDef = {
  name: 'workflow_metrics',
  tier: 'core',
  purpose: 'step durations and numeric observations per workflow',
  columns: [
    serial('id'),
    uuid('workflow_id', { required: true, references: WF }),
    varchar('workflow_type', 200),
    varchar('step_name', 200),
    varchar('metric_name', 100, { required: true }),
    double('metric_value', { required: true }),
    varchar('unit', 20),
    jsonb('tags', { default: {} }),
    timestamptz('recorded_at', { default: 'now' }),
  ],
  // by workflow only: nothing reads metrics by name, and the (metric_name, recorded_at) index
  // there was cost every step commit paid for each metric row (migration 0009 dropped it)
  indexes: [index('idx_workflow_metrics_workflow', ['workflow_id'])],
};

/** workflow_heartbeats: liveness of the node that owns a running workflow (spec). */
export const workflowHeartbeats: TableDef = {
  name: 'workflow_heartbeats',
  tier: 'core',
  purpose: 'owner liveness per running workflow; scanned for zombies',
  columns: [
    uuid('workflow_id', { pk: true, references: WF }),
    varchar('worker_id', 100, { required: true }),
    timestamptz('last_heartbeat', { default: 'now' }),
    varchar('current_step', 200),
    timestamptz('step_started_at'),
    metadata(),
  ],
  indexes: [index('idx_workflow_heartbeats_last', ['last_heartbeat'])],
};

/** tasks: the queue of ASYNC and PARALLEL work (spec columns plus retry and lease bookkeeping). */
export const tasks: TableDef = {
  name: 'tasks',
  tier: 'core',
  purpose: 'queued ASYNC and PARALLEL work',
  columns: [
    uuid('id', { pk: true }),
    uuid('workflow_id', { required: true, references: WF }),
    varchar('step_name', 200, { required: true }),
    varchar('function_path', 500, { required: true }),
    jsonb('state', { required: true }),
    jsonb('context', { required: true }),
    varchar('status', 50, { default: 'PENDING', check: TASK_STATUSES }),
    varchar('worker_id', 100),
    timestamptz('claimed_at'),
    timestamptz('completed_at'),
    jsonb('result'),
    text('error'),
    varchar('parallel_group', 200),
    integer('task_index'),
    varchar('data_region', 100),
    integer('attempts', { default: 0 }),
    integer('max_attempts', { default: 1 }),
    timestamptz('run_after', { default: 'now' }),
    timestamptz('lease_expires_at'),
    createdAt(),
  ],
  indexes: [
    index('idx_tasks_workflow', ['workflow_id']),
    // one index per claimable state, so a claim never walks finished tasks
    index('idx_tasks_pending_run_after', ['run_after'], { where: "status = 'PENDING'" }),
    index('idx_tasks_claimed_lease', ['lease_expires_at'], { where: "status = 'CLAIMED'" }),
  ],
};

/** compensation_log: one row per saga compensation attempt (spec: Saga compensation). */
export const compensationLog: TableDef = {
  name: 'compensation_log',
  tier: 'core',
  purpose: 'saga compensations with state before and after',
  columns: [
    serial('id'),
    uuid('workflow_id', { required: true, references: WF }),
    varchar('step_name', 200, { required: true }),
    varchar('compensation_function', 500, { required: true }),
    varchar('status', 20, { required: true, check: COMPENSATION_STATUSES }),
    jsonb('state_before'),
    jsonb('state_after'),
    text('error'),
    timestamptz('executed_at', { default: 'now' }),
  ],
  indexes: [index('idx_compensation_log_workflow', ['workflow_id'])],
};

/** workflow_timers: durable due-times (PARALLEL timeouts, HTTP retry delays, deadlines). */
export const workflowTimers: TableDef = {
  name: 'workflow_timers',
  tier: 'core',
  purpose: 'durable timers; never in-memory delays, which a snapshot cannot restore',
  columns: [
    uuid('id', { pk: true }),
    uuid('workflow_id', { required: true, references: WF }),
    varchar('timer_kind', 50, { required: true }),
    varchar('step_name', 200),
    timestamptz('due_at', { required: true }),
    jsonb('payload', { default: {} }),
    varchar('status', 20, { default: 'PENDING', check: TIMER_STATUSES }),
    createdAt(),
  ],
  indexes: [
    index('idx_workflow_timers_due', ['status', 'due_at']),
    index('idx_workflow_timers_workflow', ['workflow_id']),
  ],
};

/**
 * scheduled_workflows: cron registrations made by CRON_SCHEDULE steps. A cloud table in the
 * spec; the edge holds it too so the same engine runs a CRON_SCHEDULE step on either tier.
 */
export const scheduledWorkflows: TableDef = {
  name: 'scheduled_workflows',
  tier: 'core',
  purpose: 'cron-scheduled workflow definitions',
  columns: [
    uuid('id', { pk: true }),
    varchar('schedule_name', 200, { required: true, unique: true }),
    varchar('cron_expression', 200, { required: true }),
    varchar('timezone', 100, { default: 'UTC' }),
    varchar('target_workflow_type', 200, { required: true }),
    jsonb('initial_data_template', { default: {} }),
    varchar('status', 20, { default: 'ACTIVE', check: SCHEDULE_STATUSES }),
    uuid('source_workflow_id', { references: WF, onDelete: 'SET NULL' }),
    timestamptz('last_run_at'),
    timestamptz('next_run_at'),
    createdAt(),
    updatedAt(),
  ],
  indexes: [index('idx_scheduled_workflows_due', ['status', 'next_run_at'])],
};

/** The core tables, parents before children. */
export const CORE_TABLES: readonly TableDef[] = [
  workflowExecutions,
  workflowAuditLog,
  workflowExecutionLogs,
  workflowMetrics,
  workflowHeartbeats,
  tasks,
  compensationLog,
  workflowTimers,
  scheduledWorkflows,
];
