/**
 * Cloud tables of the device side: registry, commands, signed configuration, assignments,
 * business/fraud policies and the store-and-forward intake.
 */
import {
  ASSIGNMENT_TYPES,
  COMMAND_STATUSES,
  CONFIG_SCOPES,
  DEVICE_STATUSES,
  POLICY_TYPES,
  SAF_TRANSACTION_STATUSES,
  STORED_COMMAND_TYPES,
} from '../../model/statuses.js';
import {
  bigint,
  boolean,
  createdAt,
  index,
  integer,
  jsonb,
  metadata,
  text,
  timestamptz,
  updatedAt,
  uuid,
  varchar,
} from '../columns.js';
import type { TableDef } from '../model.js';

/** edge_devices: the device registry (spec columns plus credential and sync bookkeeping). */
export const edgeDevices: TableDef = {
  name: 'edge_devices',
  tier: 'cloud',
  purpose: 'device registry and credentials',
  columns: [
    varchar('device_id', 100, { pk: true }),
    varchar('device_name', 200),
    varchar('device_type', 50),
    varchar('location', 200),
    varchar('registration_key', 200),
    varchar('api_key', 200, { unique: true }),
    varchar('status', 50, { default: 'OFFLINE', check: DEVICE_STATUSES }),
    timestamptz('last_sync'),
    timestamptz('last_seen'),
    text('secret_ciphertext'),
    text('previous_secret_ciphertext'),
    timestamptz('previous_secret_expires_at'),
    timestamptz('secret_rotated_at'),
    bigint('last_sequence_number', { default: 0 }),
    varchar('firmware_version', 50),
    metadata(),
    createdAt(),
    updatedAt(),
  ],
  indexes: [
    index('idx_edge_devices_status', ['status']),
    index('idx_edge_devices_type', ['device_type']),
    index('idx_edge_devices_location', ['location']),
  ],
};

/** device_commands: cloud-to-device commands with retries, batches and broadcasts (spec). */
export const deviceCommands: TableDef = {
  name: 'device_commands',
  tier: 'cloud',
  purpose: 'cloud-to-device commands with retry and batch support',
  columns: [
    uuid('command_id', { pk: true }),
    varchar('device_id', 100, { required: true, references: 'edge_devices.device_id' }),
    varchar('command_type', 50, { required: true, check: STORED_COMMAND_TYPES }),
    jsonb('payload', { default: {} }),
    varchar('status', 50, { default: 'PENDING', check: COMMAND_STATUSES }),
    integer('retry_count', { default: 0 }),
    integer('max_retries', { default: 3 }),
    uuid('batch_id', { references: 'command_batches.batch_id', onDelete: 'SET NULL' }),
    uuid('broadcast_id', { references: 'command_broadcasts.broadcast_id', onDelete: 'SET NULL' }),
    integer('batch_sequence'),
    varchar('command_version', 50),
    varchar('created_by', 200),
    jsonb('result'),
    text('error'),
    timestamptz('next_attempt_at'),
    timestamptz('delivered_at'),
    timestamptz('expires_at'),
    createdAt(),
    timestamptz('executed_at'),
  ],
  indexes: [
    index('idx_device_commands_device_status', ['device_id', 'status']),
    // only the rows their queries look for: a command of a batch or a broadcast, an open
    // command (migration 0013)
    index('idx_device_commands_batch', ['batch_id'], { where: 'batch_id IS NOT NULL' }),
    index('idx_device_commands_broadcast', ['broadcast_id'], {
      where: 'broadcast_id IS NOT NULL',
    }),
    index('idx_device_commands_due', ['status', 'next_attempt_at'], {
      where: "status = 'PENDING' OR status = 'DELIVERED'",
    }),
  ],
};

/** device_configs: ETag-versioned, signed configuration per fleet, device type or device. */
export const deviceConfigs: TableDef = {
  name: 'device_configs',
  tier: 'cloud',
  purpose: 'ETag-versioned signed configuration; most specific scope wins',
  columns: [
    uuid('config_id', { pk: true }),
    varchar('config_name', 100, { default: 'device' }),
    varchar('scope', 20, { required: true, check: CONFIG_SCOPES }),
    varchar('scope_key', 200, { default: '*' }),
    integer('version', { required: true }),
    jsonb('config', { required: true }),
    varchar('etag', 100, { required: true }),
    varchar('checksum', 64, { required: true }),
    text('signature', { required: true }),
    boolean('is_current', { default: true }),
    varchar('created_by', 200),
    createdAt(),
  ],
  uniques: [['config_name', 'scope', 'scope_key', 'version']],
  indexes: [
    index('idx_device_configs_current', ['config_name', 'scope', 'scope_key', 'is_current']),
  ],
};

/** policies: versioned business and fraud rules. */
export const policies: TableDef = {
  name: 'policies',
  tier: 'cloud',
  purpose: 'versioned business and fraud rules',
  columns: [
    uuid('policy_id', { pk: true }),
    varchar('name', 200, { required: true }),
    varchar('policy_type', 20, { required: true, check: POLICY_TYPES }),
    integer('version', { default: 1 }),
    jsonb('rules', { default: [] }),
    boolean('enabled', { default: true }),
    text('description'),
    varchar('created_by', 200),
    createdAt(),
    updatedAt(),
  ],
  uniques: [['name', 'version']],
  indexes: [index('idx_policies_type', ['policy_type', 'enabled'])],
};

/** device_assignments: which workflows, policies, configs and WASM components a device gets. */
export const deviceAssignments: TableDef = {
  name: 'device_assignments',
  tier: 'cloud',
  purpose: 'what a device is assigned: workflows, policies, configs, WASM',
  columns: [
    uuid('assignment_id', { pk: true }),
    varchar('device_id', 100, { required: true, references: 'edge_devices.device_id' }),
    varchar('assignment_type', 20, { required: true, check: ASSIGNMENT_TYPES }),
    varchar('target_id', 200, { required: true }),
    jsonb('parameters', { default: {} }),
    boolean('active', { default: true }),
    varchar('assigned_by', 200),
    createdAt(),
  ],
  uniques: [['device_id', 'assignment_type', 'target_id']],
  indexes: [],
};

/**
 * saf_transactions: offline transactions received from devices, each accepted once. No
 * foreign key to edge_devices: settlement records outlive the device that took them.
 */
export const safTransactions: TableDef = {
  name: 'saf_transactions',
  tier: 'cloud',
  purpose: 'store-and-forward transactions accepted from devices, once each',
  columns: [
    uuid('transaction_id', { pk: true }),
    varchar('device_id', 100, { required: true }),
    bigint('device_sequence', { required: true }),
    varchar('idempotency_key', 200, { required: true, unique: true }),
    varchar('workflow_type', 200, { required: true }),
    varchar('workflow_version', 50),
    bigint('amount_minor'),
    varchar('currency', 3),
    varchar('card_token', 200),
    varchar('card_last4', 4),
    text('encrypted_payload'),
    jsonb('record', { required: true }),
    text('signature', { required: true }),
    varchar('status', 20, { default: 'ACCEPTED', check: SAF_TRANSACTION_STATUSES }),
    timestamptz('offline_created_at'),
    timestamptz('received_at', { default: 'now' }),
    timestamptz('settled_at'),
  ],
  uniques: [['device_id', 'device_sequence']],
  indexes: [
    index('idx_saf_transactions_device', ['device_id', '-received_at']),
    index('idx_saf_transactions_status', ['status']),
  ],
};

/**
 * registration_keys (migration 0004): enrollment keys an admin hands out so devices can
 * register themselves. Stored as SHA-256 only (a key has 256 bits of entropy, so a fast
 * hash is the right verifier); optionally limited to one device type, a number of uses and
 * an expiry. A registered device's `edge_devices.registration_key` names the key it used.
 */
export const registrationKeys: TableDef = {
  name: 'registration_keys',
  tier: 'cloud',
  purpose: 'device enrollment keys, hashed at rest',
  columns: [
    uuid('key_id', { pk: true }),
    varchar('name', 200, { required: true }),
    varchar('key_hash', 64, { required: true, unique: true }),
    varchar('key_prefix', 16),
    varchar('device_type', 50),
    integer('max_uses'),
    integer('use_count', { default: 0 }),
    varchar('created_by', 200),
    createdAt(),
    timestamptz('last_used_at'),
    timestamptz('expires_at'),
    timestamptz('revoked_at'),
  ],
  indexes: [],
};

/**
 * device_request_nonces (migration 0005): the replay cache of signed device requests shared
 * by every gateway process. A nonce is accepted once per device; a row lives until its
 * `expires_at` (the end of the timestamp window), after which the signature's timestamp is
 * refused anyway, so expired rows are purged. Without it a request captured on the wire
 * could be replayed once to each other gateway behind the load balancer.
 */
export const deviceRequestNonces: TableDef = {
  name: 'device_request_nonces',
  tier: 'cloud',
  purpose: 'replay cache of signed device requests, shared across gateways',
  columns: [
    varchar('device_id', 100, { required: true }),
    varchar('nonce', 128, { required: true }),
    timestamptz('expires_at', { required: true }),
  ],
  primaryKey: ['device_id', 'nonce'],
  indexes: [index('idx_device_request_nonces_expires', ['expires_at'])],
};
