/**
 * Roles and role assignments as operations return them. The four system roles (admin,
 * operator, viewer, device) always exist — the gateway's route checks are written against
 * them — and cannot be deleted; an admin may add custom roles, which matter only where an
 * authorization policy names them (the role a command requires, the roles that may approve
 * it). An assignment gives a principal — an API token (`token`, by token id), every token of
 * one operator name (`user`), or a device — a role, optionally limited by a scope and an
 * expiry. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** A role. */
export interface RoleRecord {
  roleName: string;
  description: string | null;
  permissions: string[];
  isSystem: boolean;
  createdAt: Date;
}

/** A role row. */
export interface RoleRow {
  role_name: string;
  description: string | null;
  permissions: unknown;
  is_system: unknown;
  created_at: unknown;
}

/** Decode a role row. */
export function rowToRole(codec: Codec, row: RoleRow): RoleRecord {
  const permissions = codec.parseJson(row.permissions);
  return {
    roleName: row.role_name,
    description: row.description,
    permissions: Array.isArray(permissions) ? permissions.map(String) : [],
    isSystem: codec.parseBool(row.is_system),
    createdAt: codec.parseTime(row.created_at),
  };
}

/** The system roles and what each may do (descriptive; route checks enforce them). */
export const SYSTEM_ROLES: readonly Omit<RoleRecord, 'createdAt' | 'isSystem'>[] = [
  {
    roleName: 'admin',
    description: 'everything, including tokens, roles, policies and rate limits',
    permissions: ['*'],
  },
  {
    roleName: 'operator',
    description: 'operate the fleet: commands, batches, broadcasts, approvals',
    permissions: ['read', 'commands:send', 'fleet:operate', 'approvals:decide'],
  },
  { roleName: 'viewer', description: 'read-only access', permissions: ['read'] },
  {
    roleName: 'device',
    description: 'a device acting for itself (signed requests)',
    permissions: ['device:self'],
  },
];

/** Who an assignment is for. */
export type PrincipalType = 'user' | 'token' | 'device';

/** A role assignment. */
export interface RoleAssignmentRecord {
  assignmentId: string;
  principalType: PrincipalType;
  principalId: string;
  roleName: string;
  scope: Record<string, unknown>;
  grantedBy: string | null;
  createdAt: Date;
  expiresAt: Date | null;
}

/** A role assignment row. */
export interface RoleAssignmentRow {
  assignment_id: string;
  principal_type: string;
  principal_id: string;
  role_name: string;
  scope: unknown;
  granted_by: string | null;
  created_at: unknown;
  expires_at: unknown;
}

/** Decode a role assignment row. */
export function rowToRoleAssignment(codec: Codec, row: RoleAssignmentRow): RoleAssignmentRecord {
  const scope = codec.parseJson(row.scope);
  return {
    assignmentId: row.assignment_id,
    principalType: row.principal_type as PrincipalType,
    principalId: row.principal_id,
    roleName: row.role_name,
    scope:
      typeof scope === 'object' && scope !== null && !Array.isArray(scope)
        ? (scope as Record<string, unknown>)
        : {},
    grantedBy: row.granted_by,
    createdAt: codec.parseTime(row.created_at),
    expiresAt:
      row.expires_at === null || row.expires_at === undefined
        ? null
        : codec.parseTime(row.expires_at),
  };
}
