/**
 * The authorization policy record: which commands it covers (a command type, a device
 * filter, a minimum risk level — each optional, all must match), the role a requester must
 * hold, and whether the command is held for approval, by how many distinct approvers of
 * which roles, for how long — unless the requester holds one of its exempt roles. The gateway owns matching and the device filter's shape.
 * Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a policy read returns. */
export const AUTHORIZATION_POLICY_COLUMNS = [
  'policy_id',
  'name',
  'command_type',
  'device_filter',
  'risk_level',
  'required_role',
  'requires_approval',
  'min_approvals',
  'approver_roles',
  'approval_ttl_seconds',
  'exempt_roles',
  'enabled',
  'created_at',
  'updated_at',
] as const;

/** An authorization policy. */
export interface AuthorizationPolicyRecord {
  policyId: string;
  name: string;
  commandType: string | null;
  deviceFilter: Record<string, unknown>;
  riskLevel: string | null;
  requiredRole: string | null;
  requiresApproval: boolean;
  minApprovals: number;
  approverRoles: string[];
  approvalTtlSeconds: number;
  /** Roles whose holders this policy does not hold for approval (since migration 0011). */
  exemptRoles: string[];
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A policy row as selected with {@link AUTHORIZATION_POLICY_COLUMNS}. */
export interface AuthorizationPolicyRow {
  policy_id: string;
  name: string;
  command_type: string | null;
  device_filter: unknown;
  risk_level: string | null;
  required_role: string | null;
  requires_approval: unknown;
  min_approvals: number | string;
  approver_roles: unknown;
  approval_ttl_seconds: number | string;
  exempt_roles: unknown;
  enabled: unknown;
  created_at: unknown;
  updated_at: unknown;
}

/** Decode a policy row. */
export function rowToAuthorizationPolicy(
  codec: Codec,
  row: AuthorizationPolicyRow,
): AuthorizationPolicyRecord {
  const filter = codec.parseJson(row.device_filter);
  const approvers = codec.parseJson(row.approver_roles);
  const exempt = codec.parseJson(row.exempt_roles);
  return {
    policyId: row.policy_id,
    name: row.name,
    commandType: row.command_type,
    deviceFilter:
      typeof filter === 'object' && filter !== null && !Array.isArray(filter)
        ? (filter as Record<string, unknown>)
        : {},
    riskLevel: row.risk_level,
    requiredRole: row.required_role,
    requiresApproval: codec.parseBool(row.requires_approval),
    minApprovals: codec.parseInt(row.min_approvals),
    approverRoles: Array.isArray(approvers) ? approvers.map(String) : [],
    approvalTtlSeconds: codec.parseInt(row.approval_ttl_seconds),
    exemptRoles: Array.isArray(exempt) ? exempt.map(String) : [],
    enabled: codec.parseBool(row.enabled),
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}

/** The columns `fields` set (insert and update alike). */
export function authorizationPolicyColumns(codec: Codec, fields: AuthorizationPolicyFields) {
  return {
    name: fields.name,
    command_type: fields.commandType,
    device_filter: codec.json(fields.deviceFilter),
    risk_level: fields.riskLevel,
    required_role: fields.requiredRole,
    requires_approval: codec.bool(fields.requiresApproval),
    min_approvals: fields.minApprovals,
    approver_roles: codec.json(fields.approverRoles),
    approval_ttl_seconds: fields.approvalTtlSeconds,
    exempt_roles: codec.json(fields.exemptRoles),
    enabled: codec.bool(fields.enabled),
  };
}

/** The settable fields of a policy. */
export interface AuthorizationPolicyFields {
  name: string;
  commandType: string | null;
  deviceFilter: Record<string, unknown>;
  riskLevel: string | null;
  requiredRole: string | null;
  requiresApproval: boolean;
  minApprovals: number;
  approverRoles: readonly string[];
  approvalTtlSeconds: number;
  exemptRoles: readonly string[];
  enabled: boolean;
}
