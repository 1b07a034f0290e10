/**
 * Cloud tables of fleet operations: batches, broadcasts, templates, schedules and versioned
 * command definitions.
 */
import {
  BATCH_STATUSES,
  BROADCAST_STATUSES,
  RISK_LEVELS,
  SCHEDULE_EXECUTION_STATUSES,
  SCHEDULE_STATUSES,
} from '../../model/statuses.js';
import {
  boolean,
  createdAt,
  double,
  index,
  integer,
  jsonb,
  serial,
  text,
  timestamptz,
  updatedAt,
  uuid,
  varchar,
} from '../columns.js';
import type { TableDef } from '../model.js';

/** command_broadcasts: one command to every device matching a filter, in phases. */
export const commandBroadcasts: TableDef = {
  name: 'command_broadcasts',
  tier: 'cloud',
  purpose: 'a command to every device matching a filter, rolled out in phases',
  columns: [
    uuid('broadcast_id', { pk: true }),
    varchar('command_type', 50, { required: true }),
    jsonb('payload', { default: {} }),
    jsonb('target_filter', { default: {} }),
    jsonb('rollout', { default: {} }),
    varchar('status', 30, { default: 'PENDING', check: BROADCAST_STATUSES }),
    integer('current_phase', { default: 0 }),
    integer('total_devices', { default: 0 }),
    integer('succeeded_count', { default: 0 }),
    integer('failed_count', { default: 0 }),
    double('failure_threshold'),
    jsonb('actor_snapshot'),
    varchar('created_by', 200),
    createdAt(),
    updatedAt(),
    timestamptz('completed_at'),
  ],
  indexes: [index('idx_command_broadcasts_status', ['status'])],
};

/** command_batches: many commands run sequentially or in parallel per device. */
export const commandBatches: TableDef = {
  name: 'command_batches',
  tier: 'cloud',
  purpose: 'command batches, each an actor persisted as a snapshot',
  columns: [
    uuid('batch_id', { pk: true }),
    varchar('name', 200),
    varchar('execution_mode', 20, { default: 'PARALLEL', check: ['SEQUENTIAL', 'PARALLEL'] }),
    varchar('status', 30, { default: 'PENDING', check: BATCH_STATUSES }),
    integer('total_commands', { default: 0 }),
    integer('completed_count', { default: 0 }),
    integer('failed_count', { default: 0 }),
    jsonb('actor_snapshot'),
    varchar('created_by', 200),
    createdAt(),
    updatedAt(),
    timestamptz('completed_at'),
  ],
  indexes: [index('idx_command_batches_status', ['status'])],
};

/** command_templates: named, versioned command sets with typed variables. */
export const commandTemplates: TableDef = {
  name: 'command_templates',
  tier: 'cloud',
  purpose: 'named, versioned command sets with typed variables',
  columns: [
    uuid('template_id', { pk: true }),
    varchar('name', 200, { required: true }),
    integer('version', { default: 1 }),
    text('description'),
    jsonb('commands', { required: true }),
    jsonb('variables', { default: {} }),
    varchar('created_by', 200),
    createdAt(),
    updatedAt(),
  ],
  uniques: [['name', 'version']],
  indexes: [],
};

/** command_schedules: one-time or cron schedules of commands, templates or broadcasts. */
export const commandSchedules: TableDef = {
  name: 'command_schedules',
  tier: 'cloud',
  purpose: 'one-time or cron schedules for commands, templates and broadcasts',
  columns: [
    uuid('schedule_id', { pk: true }),
    varchar('name', 200, { required: true }),
    varchar('schedule_type', 10, { required: true, check: ['ONCE', 'CRON'] }),
    varchar('cron_expression', 200),
    timestamptz('run_at'),
    varchar('timezone', 100, { default: 'UTC' }),
    varchar('target_kind', 20, { required: true, check: ['COMMAND', 'TEMPLATE', 'BROADCAST'] }),
    jsonb('target', { required: true }),
    jsonb('maintenance_window'),
    varchar('status', 20, { default: 'ACTIVE', check: SCHEDULE_STATUSES }),
    timestamptz('next_run_at'),
    timestamptz('last_run_at'),
    varchar('created_by', 200),
    createdAt(),
    updatedAt(),
  ],
  indexes: [index('idx_command_schedules_due', ['status', 'next_run_at'])],
};

/** schedule_executions: every run of a command schedule. */
export const scheduleExecutions: TableDef = {
  name: 'schedule_executions',
  tier: 'cloud',
  purpose: 'every run of a command schedule',
  columns: [
    uuid('execution_id', { pk: true }),
    uuid('schedule_id', { required: true, references: 'command_schedules.schedule_id' }),
    timestamptz('scheduled_for'),
    timestamptz('started_at', { default: 'now' }),
    timestamptz('finished_at'),
    varchar('status', 20, { required: true, check: SCHEDULE_EXECUTION_STATUSES }),
    jsonb('result', { default: {} }),
    text('error'),
  ],
  indexes: [index('idx_schedule_executions_schedule', ['schedule_id', '-started_at'])],
};

/** command_versions: a JSON schema per command type and version (`risk_level` since 0007). */
export const commandVersions: TableDef = {
  name: 'command_versions',
  tier: 'cloud',
  purpose: 'JSON schema of each command type per version',
  columns: [
    uuid('id', { pk: true }),
    varchar('command_type', 50, { required: true }),
    varchar('version', 50, { required: true }),
    jsonb('payload_schema', { required: true }),
    text('description'),
    // since migration 0007: the risk of commands of this version (authorization policies)
    varchar('risk_level', 20, { check: RISK_LEVELS }),
    boolean('deprecated', { default: false }),
    timestamptz('deprecated_at'),
    varchar('replaced_by', 50),
    varchar('created_by', 200),
    createdAt(),
  ],
  uniques: [['command_type', 'version']],
  indexes: [],
};

/** command_changelog: the history of command definitions. */
export const commandChangelog: TableDef = {
  name: 'command_changelog',
  tier: 'cloud',
  purpose: 'history of command definition changes',
  columns: [
    serial('id'),
    varchar('command_type', 50, { required: true }),
    varchar('from_version', 50),
    varchar('to_version', 50, { required: true }),
    varchar('change_type', 20, {
      required: true,
      check: ['CREATED', 'UPDATED', 'DEPRECATED', 'REMOVED'],
    }),
    jsonb('changes', { default: {} }),
    varchar('author', 200),
    createdAt(),
  ],
  indexes: [index('idx_command_changelog_type', ['command_type', '-created_at'])],
};
