/**
 * Kysely table types of the control plane's governance tables (cloud tier): versioned
 * command definitions and their changelog, roles and role assignments, authorization
 * policies, multi-party approvals, and rate-limit rules with their counters. Conventions as
 * in database.ts.
 */
import type { ColumnType, Generated } from 'kysely';
import type {
  DefaultInt,
  DefaultJson,
  DefaultTime,
  NullableJsonColumn,
  NullableTime,
} from './database.js';

/** A column with a database default, written as `T`. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** command_versions row (risk_level since migration 0007). */
export interface CommandVersionsTable {
  id: string;
  command_type: string;
  version: string;
  payload_schema: ColumnType<unknown, string, string>;
  description: string | null;
  risk_level: string | null;
  deprecated: Defaulted<boolean | number>;
  deprecated_at: NullableTime;
  replaced_by: string | null;
  created_by: string | null;
  created_at: DefaultTime;
}

/** command_changelog row. */
export interface CommandChangelogTable {
  id: Generated<number>;
  command_type: string;
  from_version: string | null;
  to_version: string;
  change_type: string;
  changes: DefaultJson;
  author: string | null;
  created_at: DefaultTime;
}

/** authorization_roles row. */
export interface AuthorizationRolesTable {
  role_name: string;
  description: string | null;
  permissions: DefaultJson;
  is_system: Defaulted<boolean | number>;
  created_at: DefaultTime;
}

/** role_assignments row. */
export interface RoleAssignmentsTable {
  assignment_id: string;
  principal_type: string;
  principal_id: string;
  role_name: string;
  scope: DefaultJson;
  granted_by: string | null;
  created_at: DefaultTime;
  expires_at: NullableTime;
}

/** authorization_policies row (risk_level since migration 0007, exempt_roles since 0011). */
export interface AuthorizationPoliciesTable {
  policy_id: string;
  name: string;
  command_type: string | null;
  device_filter: DefaultJson;
  risk_level: string | null;
  required_role: string | null;
  requires_approval: Defaulted<boolean | number>;
  min_approvals: DefaultInt;
  approver_roles: DefaultJson;
  approval_ttl_seconds: DefaultInt;
  exempt_roles: DefaultJson;
  enabled: Defaulted<boolean | number>;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}

/** command_approvals row. */
export interface CommandApprovalsTable {
  approval_id: string;
  policy_id: string | null;
  requested_by: string;
  command_request: ColumnType<unknown, string, string>;
  status: Defaulted<string>;
  required_approvals: DefaultInt;
  expires_at: NullableTime;
  decided_at: NullableTime;
  executed_at: NullableTime;
  result: NullableJsonColumn;
  created_at: DefaultTime;
}

/** approval_responses row. */
export interface ApprovalResponsesTable {
  response_id: string;
  approval_id: string;
  approver: string;
  decision: string;
  comment: string | null;
  created_at: DefaultTime;
}

/** rate_limit_rules row. */
export interface RateLimitRulesTable {
  rule_id: string;
  name: string;
  scope: string;
  route_pattern: Defaulted<string>;
  max_requests: number;
  window_seconds: number;
  burst: number | null;
  enabled: Defaulted<boolean | number>;
  created_at: DefaultTime;
  updated_at: DefaultTime;
}

/** rate_limit_tracking row: one fixed window's counter of one rule and subject. */
export interface RateLimitTrackingTable {
  rule_id: string;
  subject_key: string;
  window_start: ColumnType<unknown, string, string>;
  request_count: DefaultInt;
  updated_at: DefaultTime;
}
