/**
 * Closed sets of the core model: each is an `as const` array, a derived type and a runtime
 * guard, and each is mirrored by a CHECK constraint in both databases (see runtime/schema).
 *
 * Workflow status transitions (docs/architecture.md#statuses):
 *
 * | from                 | event                                   | to                    |
 * |----------------------|-----------------------------------------|-----------------------|
 * | (new)                | start                                   | ACTIVE                |
 * | ACTIVE               | ASYNC / PARALLEL tasks dispatched       | PENDING_ASYNC         |
 * | PENDING_ASYNC        | last task completes                     | ACTIVE                |
 * | ACTIVE               | sub-workflow directive                  | PENDING_SUB_WORKFLOW  |
 * | PENDING_SUB_WORKFLOW | child completes                         | ACTIVE                |
 * | ACTIVE               | pause directive (HUMAN_IN_LOOP)         | WAITING_HUMAN_INPUT   |
 * | WAITING_HUMAN_INPUT  | resume with input                       | ACTIVE                |
 * | any non-terminal     | operator pause / resume                 | PAUSED / previous     |
 * | ACTIVE               | last step completes                     | COMPLETED             |
 * | any non-terminal     | step fails, no compensation registered  | FAILED                |
 * | any non-terminal     | step fails, compensations ran           | FAILED_ROLLED_BACK    |
 * | any non-terminal     | cancel                                  | CANCELLED             |
 * | FAILED, FAILED_…     | retry                                   | ACTIVE                |
 */

function guard<T extends string>(values: readonly T[]): (value: unknown) => value is T {
  const set = new Set<unknown>(values);
  return (value: unknown): value is T => set.has(value);
}

/** Every workflow status. */
export const WORKFLOW_STATUSES = [
  'ACTIVE',
  'PENDING_ASYNC',
  'PENDING_SUB_WORKFLOW',
  'WAITING_HUMAN_INPUT',
  'PAUSED',
  'COMPLETED',
  'FAILED',
  'FAILED_ROLLED_BACK',
  'CANCELLED',
] as const;
/** A workflow status. */
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
/** Runtime check for {@link WorkflowStatus}. */
export const isWorkflowStatus = guard(WORKFLOW_STATUSES);
/** Statuses a workflow never leaves except by an explicit retry. */
export const TERMINAL_WORKFLOW_STATUSES = [
  'COMPLETED',
  'FAILED',
  'FAILED_ROLLED_BACK',
  'CANCELLED',
] as const satisfies readonly WorkflowStatus[];
/** Runtime check for a terminal status. */
export const isTerminalWorkflowStatus = guard(TERMINAL_WORKFLOW_STATUSES);

/** Task status (spec: Task status). */
export const TASK_STATUSES = ['PENDING', 'CLAIMED', 'COMPLETED', 'FAILED'] as const;
/** A task status. */
export type TaskStatus = (typeof TASK_STATUSES)[number];
/** Runtime check for {@link TaskStatus}. */
export const isTaskStatus = guard(TASK_STATUSES);

/** Device status (spec: Device status). */
export const DEVICE_STATUSES = ['ONLINE', 'OFFLINE', 'SYNCING'] as const;
/** A device status. */
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/** Device command status (spec: Device command status). */
export const COMMAND_STATUSES = [
  'PENDING',
  'DELIVERED',
  'EXECUTED',
  'FAILED',
  'CANCELLED',
] as const;
/** A device command status. */
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

/** Command types named by the spec; the edge also accepts the lower-case aliases. */
export const COMMAND_TYPES = [
  'UPDATE_CONFIG',
  'SYNC_TRANSACTIONS',
  'UPDATE_WORKFLOW',
  'REBOOT',
  'DIAGNOSTIC',
  'SYNC_WASM',
] as const;

/** Lower-case aliases the cloud accepts (and stores) for two command types, as the edge does. */
export const COMMAND_TYPE_ALIASES = ['update_workflow', 'sync_wasm'] as const;

/** What device_commands.command_type holds: the spec's names and their aliases. */
export const STORED_COMMAND_TYPES = [...COMMAND_TYPES, ...COMMAND_TYPE_ALIASES] as const;

/** workflow_audit_log.event_type values: the spec's names plus the design's additions. */
export const AUDIT_EVENT_TYPES = [
  'WORKFLOW_STARTED',
  'STEP_STARTED',
  'STEP_EXECUTED',
  'STEP_FAILED',
  'JUMPED',
  'TASK_DISPATCHED',
  'TASK_COMPLETED',
  'LOOP_LIMIT_REACHED',
  'WORKFLOW_PAUSED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_COMPLETED',
  'WORKFLOW_FAILED',
  'WORKFLOW_CANCELLED',
  'WORKFLOW_RETRIED',
  'WORKFLOW_RECOVERED',
  'COMPENSATION_STARTED',
  'COMPENSATION_COMPLETED',
  'COMPENSATION_FAILED',
] as const;
/** An audit event type. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** workflow_execution_logs.level values. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
/** A step log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** compensation_log.status values. */
export const COMPENSATION_STATUSES = ['STARTED', 'COMPLETED', 'FAILED'] as const;

/** Batch lifecycle (command_batches). */
export const BATCH_STATUSES = [
  'PENDING',
  'IN_PROGRESS',
  'COMPLETED',
  'PARTIALLY_FAILED',
  'FAILED',
  'CANCELLED',
] as const;

/** Broadcast lifecycle (command_broadcasts). */
export const BROADCAST_STATUSES = [
  'PENDING',
  'IN_PROGRESS',
  'WAITING_NEXT_PHASE',
  'COMPLETED',
  'HALTED',
  'CANCELLED',
] as const;

/** Approval lifecycle (command_approvals). */
export const APPROVAL_STATUSES = [
  'PENDING',
  'APPROVED',
  'REJECTED',
  'EXPIRED',
  'EXECUTED',
] as const;

/** Roles of the authorization model. */
export const ROLE_NAMES = ['admin', 'operator', 'viewer', 'device'] as const;
/** A role name. */
export type RoleName = (typeof ROLE_NAMES)[number];

/**
 * Risk levels of commands, least risky first (authorization_policies.risk_level,
 * command_versions.risk_level; migration 0007). A policy with a risk level applies to
 * commands at that level or above.
 */
export const RISK_LEVELS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
/** A command risk level. */
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Webhook delivery lifecycle. */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'DEAD'] as const;

/** Cloud-side state of a store-and-forward transaction. */
export const SAF_TRANSACTION_STATUSES = ['ACCEPTED', 'SETTLED', 'REJECTED'] as const;

/** Edge-side state of a queued store-and-forward record. */
export const SAF_PENDING_STATUSES = ['PENDING', 'SYNCED', 'REJECTED'] as const;

/** Schedule lifecycle (command_schedules, scheduled_workflows). */
export const SCHEDULE_STATUSES = ['ACTIVE', 'PAUSED', 'COMPLETED', 'DELETED'] as const;

/** Outcome of one schedule run. */
export const SCHEDULE_EXECUTION_STATUSES = ['SUCCEEDED', 'FAILED', 'SKIPPED'] as const;

/** Worker node health (worker_nodes). */
export const WORKER_STATUSES = ['ACTIVE', 'DRAINING', 'STOPPED', 'DEAD'] as const;

/** Durable timer state (workflow_timers). */
export const TIMER_STATUSES = ['PENDING', 'FIRED', 'CANCELLED'] as const;

/** Scopes of device configuration, least specific first (device_configs.scope). */
export const CONFIG_SCOPES = ['fleet', 'device_type', 'device'] as const;
/** A configuration scope. */
export type ConfigScope = (typeof CONFIG_SCOPES)[number];

/** Kinds of policy (policies.policy_type). */
export const POLICY_TYPES = ['FRAUD', 'BUSINESS'] as const;
/** A policy type. */
export type PolicyType = (typeof POLICY_TYPES)[number];

/** What a device can be assigned (device_assignments.assignment_type). */
export const ASSIGNMENT_TYPES = ['WORKFLOW', 'POLICY', 'CONFIG', 'WASM'] as const;
/** An assignment type. */
export type AssignmentType = (typeof ASSIGNMENT_TYPES)[number];
