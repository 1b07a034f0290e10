/**
 * Cloud tables of operations: workers, command audit and retention, webhooks, the WASM
 * registry and migration tracking.
 */
import { WEBHOOK_DELIVERY_STATUSES, WORKER_STATUSES } from '../../model/statuses.js';
import {
  bigint,
  bigserial,
  boolean,
  createdAt,
  index,
  integer,
  jsonb,
  metadata,
  text,
  timestamp,
  timestamptz,
  tsvector,
  updatedAt,
  uuid,
  varchar,
} from '../columns.js';
import type { TableDef } from '../model.js';

/** worker_nodes: worker registry and health. */
export const workerNodes: TableDef = {
  name: 'worker_nodes',
  tier: 'cloud',
  purpose: 'worker registry and health',
  columns: [
    varchar('worker_id', 100, { pk: true }),
    varchar('hostname', 200),
    integer('pid'),
    varchar('status', 20, { default: 'ACTIVE', check: WORKER_STATUSES }),
    jsonb('capabilities', { default: [] }),
    integer('concurrency', { default: 1 }),
    timestamptz('last_heartbeat', { default: 'now' }),
    timestamptz('started_at', { default: 'now' }),
    metadata(),
  ],
  indexes: [index('idx_worker_nodes_heartbeat', ['last_heartbeat'])],
};

/** command_audit_log: every command action, with cloud full-text search. */
export const commandAuditLog: TableDef = {
  name: 'command_audit_log',
  tier: 'cloud',
  purpose: 'every command action, searchable',
  columns: [
    bigserial('id'),
    varchar('event_type', 100, { required: true }),
    varchar('actor', 200),
    varchar('actor_role', 50),
    varchar('device_id', 100),
    uuid('command_id'),
    uuid('batch_id'),
    uuid('broadcast_id'),
    jsonb('details', { default: {} }),
    varchar('source_ip', 100),
    createdAt(),
    // since migration 0006 the search also covers the values inside `details`
    tsvector('search_vector', {
      generated:
        "to_tsvector('simple', event_type || ' ' || coalesce(actor, '') || ' ' || coalesce(actor_role, '') || ' ' || coalesce(device_id, '')) || jsonb_to_tsvector('simple', details, '[\"string\", \"numeric\", \"boolean\"]')",
    }),
  ],
  indexes: [
    index('idx_command_audit_log_created', ['-created_at']),
    index('idx_command_audit_log_device', ['device_id', '-created_at']),
    // a short pending list: the insert that fills it merges it into the index, and a 4 MB
    // list (PostgreSQL's default) held that insert for some 30 ms at a thousand commands/s
    index('idx_command_audit_log_search', ['search_vector'], {
      using: 'gin',
      storage: { gin_pending_list_limit: 256 },
    }),
    index('idx_command_audit_log_command', ['command_id']),
  ],
};

/** audit_retention_policies: how long each audit table keeps rows. */
export const auditRetentionPolicies: TableDef = {
  name: 'audit_retention_policies',
  tier: 'cloud',
  purpose: 'retention per audit table',
  columns: [
    uuid('policy_id', { pk: true }),
    varchar('name', 200, { required: true, unique: true }),
    varchar('table_name', 100, {
      required: true,
      check: [
        'command_audit_log',
        'workflow_audit_log',
        'workflow_execution_logs',
        'webhook_deliveries',
      ],
    }),
    integer('retention_days', { required: true }),
    jsonb('event_types', { default: [] }),
    boolean('archive', { default: false }),
    boolean('enabled', { default: true }),
    timestamptz('last_run_at'),
    createdAt(),
    updatedAt(),
  ],
  indexes: [],
};

/** webhook_registrations: subscribers to events. */
export const webhookRegistrations: TableDef = {
  name: 'webhook_registrations',
  tier: 'cloud',
  purpose: 'webhook subscribers',
  columns: [
    uuid('webhook_id', { pk: true }),
    varchar('name', 200),
    text('url', { required: true }),
    jsonb('event_types', { default: [] }),
    text('secret_ciphertext', { required: true }),
    boolean('active', { default: true }),
    integer('max_retries', { default: 5 }),
    varchar('created_by', 200),
    createdAt(),
    updatedAt(),
    // migration 0006: the last sequence number given to an event of this registration
    bigint('event_sequence', { default: 0 }),
  ],
  indexes: [],
};

/** webhook_deliveries: delivery history and retry state, one row per event and webhook. */
export const webhookDeliveries: TableDef = {
  name: 'webhook_deliveries',
  tier: 'cloud',
  purpose: 'webhook delivery history with retry state',
  columns: [
    uuid('delivery_id', { pk: true }),
    uuid('webhook_id', { required: true, references: 'webhook_registrations.webhook_id' }),
    uuid('event_id', { required: true }),
    varchar('event_type', 100, { required: true }),
    jsonb('payload', { required: true }),
    varchar('status', 20, { default: 'PENDING', check: WEBHOOK_DELIVERY_STATUSES }),
    integer('attempt_count', { default: 0 }),
    timestamptz('next_attempt_at'),
    integer('last_status_code'),
    text('last_error'),
    createdAt(),
    timestamptz('delivered_at'),
    // migration 0006: order within the registration, and the history of attempts
    bigint('sequence', { default: 0 }),
    jsonb('attempts', { default: [] }),
  ],
  uniques: [['webhook_id', 'event_id']],
  indexes: [
    index('idx_webhook_deliveries_due', ['status', 'next_attempt_at']),
    index('idx_webhook_deliveries_order', ['webhook_id', 'sequence']),
    index('idx_webhook_deliveries_head', ['webhook_id', 'status', 'sequence']),
  ],
};

/**
 * wasm_components: the registry of precompiled WebAssembly binaries (spec columns, plus
 * `size_bytes` and — since migration 0002 — a free-text `description`).
 */
export const wasmComponents: TableDef = {
  name: 'wasm_components',
  tier: 'cloud',
  purpose: 'registry of WebAssembly binaries, addressed by SHA-256',
  columns: [
    varchar('id', 36, { pk: true }),
    varchar('name', 200, { required: true }),
    varchar('version_tag', 50, { required: true }),
    varchar('binary_hash', 64, { required: true, unique: true }),
    text('blob_storage_path', { required: true }),
    text('description'),
    text('input_schema'),
    text('output_schema'),
    bigint('size_bytes'),
    timestamp('created_at', { default: 'now' }),
    timestamp('updated_at', { default: 'now' }),
  ],
  indexes: [index('idx_wasm_components_name', ['name', 'version_tag'])],
};

/**
 * workflow_definitions: definitions registered through the API (migration 0003), so a
 * control plane that restarts serves the same workflow types. The latest registration of
 * a type is the one new workflows start with; running ones keep their own snapshot.
 */
export const workflowDefinitions: TableDef = {
  name: 'workflow_definitions',
  tier: 'cloud',
  purpose: 'workflow definitions registered through the API',
  columns: [
    uuid('id', { pk: true }),
    varchar('workflow_type', 200, { required: true }),
    varchar('workflow_version', 50),
    varchar('definition_hash', 64, { required: true }),
    text('source_yaml', { required: true }),
    varchar('created_by', 200),
    createdAt(),
  ],
  uniques: [['workflow_type', 'definition_hash']],
  indexes: [index('idx_workflow_definitions_type', ['workflow_type', '-created_at'])],
};

/** alembic_version: the id of the last applied cloud migration (spec: Migration tracking). */
export const alembicVersion: TableDef = {
  name: 'alembic_version',
  tier: 'cloud',
  purpose: 'current migration version',
  columns: [varchar('version_num', 32, { pk: true })],
  indexes: [],
};
