/**
 * Edge-only tables. Created with CREATE TABLE IF NOT EXISTS when the agent starts (spec: edge
 * schema is created if absent, with no migration step).
 */
import { SAF_PENDING_STATUSES } from '../../model/statuses.js';
import {
  bigint,
  bytea,
  createdAt,
  index,
  integer,
  jsonb,
  text,
  timestamptz,
  updatedAt,
  uuid,
  varchar,
} from '../columns.js';
import type { TableDef } from '../model.js';

/** saf_pending_transactions: the store-and-forward queue of signed transaction records. */
export const safPendingTransactions: TableDef = {
  name: 'saf_pending_transactions',
  tier: 'edge',
  purpose: 'signed offline transaction records waiting for upload',
  columns: [
    uuid('workflow_id', { pk: true }),
    varchar('device_id', 100, { required: true }),
    bigint('sequence_number', { required: true, unique: true }),
    varchar('idempotency_key', 200, { required: true, unique: true }),
    varchar('workflow_type', 200, { required: true }),
    varchar('workflow_version', 50),
    bigint('amount_minor'),
    varchar('currency', 3),
    jsonb('record', { required: true }),
    text('signature', { required: true }),
    varchar('status', 20, { default: 'PENDING', check: SAF_PENDING_STATUSES }),
    integer('upload_attempts', { default: 0 }),
    text('last_error'),
    createdAt(),
    timestamptz('synced_at'),
  ],
  indexes: [
    index('idx_saf_pending_status_seq', ['status', 'sequence_number']),
    // the oldest PENDING record's time, read before every offline payment, is this index's
    // first entry (edge/saf/readSafBacklog.ts); a database without the triggers' totals
    // (runtime/store/sqlite/safBacklogTotals.ts) sums the amounts from it too
    index('idx_saf_pending_status_created', ['status', 'created_at', 'amount_minor']),
  ],
};

/** device_config_cache: the last verified config per config name, with its ETag. */
export const deviceConfigCache: TableDef = {
  name: 'device_config_cache',
  tier: 'edge',
  purpose: 'last verified configuration and its ETag',
  columns: [
    varchar('config_name', 100, { pk: true }),
    varchar('etag', 100, { required: true }),
    integer('version'),
    jsonb('config', { required: true }),
    varchar('checksum', 64, { required: true }),
    text('signature', { required: true }),
    timestamptz('fetched_at', { default: 'now' }),
    timestamptz('applied_at'),
  ],
  indexes: [],
};

/** edge_sync_state: small key/value facts of the sync component (sequence, last sync, backoff). */
export const edgeSyncState: TableDef = {
  name: 'edge_sync_state',
  tier: 'edge',
  purpose: 'sync bookkeeping: next sequence, last sync, backoff',
  columns: [varchar('key', 100, { pk: true }), jsonb('value', { required: true }), updatedAt()],
  indexes: [],
};

/** edge_workflow_cache: workflow YAML hot-deployed by an update_workflow command. */
export const edgeWorkflowCache: TableDef = {
  name: 'edge_workflow_cache',
  tier: 'edge',
  purpose: 'workflow definitions hot-deployed by update_workflow',
  columns: [
    varchar('workflow_type', 200, { pk: true }),
    varchar('workflow_version', 50),
    text('yaml', { required: true }),
    varchar('definition_hash', 64, { required: true }),
    uuid('source_command_id'),
    createdAt(),
    updatedAt(),
  ],
  indexes: [],
};

/** device_wasm_cache: WASM binaries by SHA-256 (spec columns). */
export const deviceWasmCache: TableDef = {
  name: 'device_wasm_cache',
  tier: 'edge',
  purpose: 'WASM binaries by SHA-256',
  columns: [
    text('binary_hash', { pk: true }),
    bytea('binary_data', { required: true }),
    timestamptz('last_accessed', { default: 'now' }),
  ],
  indexes: [],
};

/** The edge-only tables. */
export const EDGE_TABLES: readonly TableDef[] = [
  safPendingTransactions,
  deviceConfigCache,
  edgeSyncState,
  edgeWorkflowCache,
  deviceWasmCache,
];
