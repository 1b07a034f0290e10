/**
 * Cloud tables of access control: API tokens, roles, assignments, policies, multi-party
 * approvals and rate limits.
 */
import { APPROVAL_STATUSES, RISK_LEVELS, ROLE_NAMES } from '../../model/statuses.js';
import {
  boolean,
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

/** api_tokens: user API tokens, stored as hashes only. */
export const apiTokens: TableDef = {
  name: 'api_tokens',
  tier: 'cloud',
  purpose: 'operator API tokens, hashed at rest',
  columns: [
    uuid('token_id', { pk: true }),
    varchar('name', 200, { required: true }),
    varchar('role_name', 50, { required: true, check: ROLE_NAMES }),
    varchar('token_hash', 128, { required: true, unique: true }),
    varchar('token_prefix', 16),
    createdAt(),
    timestamptz('last_used_at'),
    timestamptz('expires_at'),
    timestamptz('revoked_at'),
  ],
  indexes: [],
};

/** authorization_roles: admin, operator, viewer, device and their permissions. */
export const authorizationRoles: TableDef = {
  name: 'authorization_roles',
  tier: 'cloud',
  purpose: 'roles and their permissions',
  columns: [
    varchar('role_name', 50, { pk: true }),
    text('description'),
    jsonb('permissions', { default: [] }),
    boolean('is_system', { default: false }),
    createdAt(),
  ],
  indexes: [],
};

/** role_assignments: which principal holds which role, optionally scoped. */
export const roleAssignments: TableDef = {
  name: 'role_assignments',
  tier: 'cloud',
  purpose: 'roles held by users, tokens and devices',
  columns: [
    uuid('assignment_id', { pk: true }),
    varchar('principal_type', 20, { required: true, check: ['user', 'token', 'device'] }),
    varchar('principal_id', 200, { required: true }),
    varchar('role_name', 50, { required: true, references: 'authorization_roles.role_name' }),
    jsonb('scope', { default: {} }),
    varchar('granted_by', 200),
    createdAt(),
    timestamptz('expires_at'),
  ],
  uniques: [['principal_type', 'principal_id', 'role_name']],
  indexes: [],
};

/**
 * authorization_policies: who may issue which command, and whether approval is required
 * (`risk_level` since migration 0007; `exempt_roles` — roles whose holders are not held for
 * approval — and the shipped default policies since migration 0011).
 */
export const authorizationPolicies: TableDef = {
  name: 'authorization_policies',
  tier: 'cloud',
  purpose: 'command permissions and approval requirements',
  columns: [
    uuid('policy_id', { pk: true }),
    varchar('name', 200, { required: true, unique: true }),
    varchar('command_type', 50),
    jsonb('device_filter', { default: {} }),
    // since migration 0007: the policy applies to commands at this risk level or above
    varchar('risk_level', 20, { check: RISK_LEVELS }),
    varchar('required_role', 50),
    boolean('requires_approval', { default: false }),
    integer('min_approvals', { default: 1 }),
    jsonb('approver_roles', { default: ['admin'] }),
    integer('approval_ttl_seconds', { default: 86400 }),
    boolean('enabled', { default: true }),
    createdAt(),
    updatedAt(),
    // since migration 0011: holders of these roles are not held for approval by the policy
    jsonb('exempt_roles', { default: [] }),
  ],
  indexes: [],
};

/** command_approvals: a command held until enough distinct approvers agree. */
export const commandApprovals: TableDef = {
  name: 'command_approvals',
  tier: 'cloud',
  purpose: 'commands held for multi-party approval',
  columns: [
    uuid('approval_id', { pk: true }),
    uuid('policy_id', { references: 'authorization_policies.policy_id', onDelete: 'SET NULL' }),
    varchar('requested_by', 200, { required: true }),
    jsonb('command_request', { required: true }),
    varchar('status', 20, { default: 'PENDING', check: APPROVAL_STATUSES }),
    integer('required_approvals', { default: 1 }),
    timestamptz('expires_at'),
    timestamptz('decided_at'),
    timestamptz('executed_at'),
    jsonb('result'),
    createdAt(),
  ],
  indexes: [index('idx_command_approvals_status', ['status', '-created_at'])],
};

/** approval_responses: one decision per approver. */
export const approvalResponses: TableDef = {
  name: 'approval_responses',
  tier: 'cloud',
  purpose: 'approvers’ decisions, one each',
  columns: [
    uuid('response_id', { pk: true }),
    uuid('approval_id', { required: true, references: 'command_approvals.approval_id' }),
    varchar('approver', 200, { required: true }),
    varchar('decision', 10, { required: true, check: ['APPROVE', 'REJECT'] }),
    text('comment'),
    createdAt(),
  ],
  uniques: [['approval_id', 'approver']],
  indexes: [],
};

/** rate_limit_rules: per-device, per-key, per-user or global request limits. */
export const rateLimitRules: TableDef = {
  name: 'rate_limit_rules',
  tier: 'cloud',
  purpose: 'request limits per device, key, user or globally',
  columns: [
    uuid('rule_id', { pk: true }),
    varchar('name', 200, { required: true, unique: true }),
    varchar('scope', 20, { required: true, check: ['device', 'api_key', 'user', 'global'] }),
    varchar('route_pattern', 200, { default: '*' }),
    integer('max_requests', { required: true }),
    integer('window_seconds', { required: true }),
    integer('burst'),
    boolean('enabled', { default: true }),
    createdAt(),
    updatedAt(),
  ],
  indexes: [],
};

/** rate_limit_tracking: fixed-window counters per rule and subject. */
export const rateLimitTracking: TableDef = {
  name: 'rate_limit_tracking',
  tier: 'cloud',
  purpose: 'request counters per rule, subject and window',
  columns: [
    uuid('rule_id', { required: true, references: 'rate_limit_rules.rule_id' }),
    varchar('subject_key', 200, { required: true }),
    timestamptz('window_start', { required: true }),
    integer('request_count', { default: 0 }),
    updatedAt(),
  ],
  primaryKey: ['rule_id', 'subject_key', 'window_start'],
  indexes: [index('idx_rate_limit_tracking_window', ['window_start'])],
};
