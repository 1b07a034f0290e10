/**
 * Governance records as the API shows them: snake_case, ISO 8601 times. Each `…Json` has a
 * matching zod schema for the OpenAPI document.
 */
import { z } from 'zod';
import type { ApprovalRecord } from './store/approvals/index.js';
import type {
  AuthorizationPolicyRecord,
  RoleAssignmentRecord,
  RoleRecord,
} from './store/authorization/index.js';
import type {
  CommandChangelogRecord,
  CommandVersionRecord,
} from './store/commandVersions/index.js';
import type { RateLimitRuleRecord } from './store/rateLimits/index.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A command version. */
export const commandVersionJson = (v: CommandVersionRecord) => ({
  command_type: v.commandType,
  version: v.version,
  payload_schema: v.payloadSchema,
  description: v.description,
  risk_level: v.riskLevel,
  deprecated: v.deprecated,
  deprecated_at: iso(v.deprecatedAt),
  replaced_by: v.replacedBy,
  created_by: v.createdBy,
  created_at: v.createdAt.toISOString(),
});

/** Schema of {@link commandVersionJson}. */
export const commandVersionSchema = z.object({
  command_type: z.string(),
  version: z.string(),
  payload_schema: z.unknown(),
  description: z.string().nullable(),
  risk_level: z.string().nullable(),
  deprecated: z.boolean(),
  deprecated_at: z.string().nullable(),
  replaced_by: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
});

/** A changelog entry. */
export const changelogJson = (c: CommandChangelogRecord) => ({
  id: c.id,
  command_type: c.commandType,
  from_version: c.fromVersion,
  to_version: c.toVersion,
  change_type: c.changeType,
  changes: c.changes,
  author: c.author,
  created_at: c.createdAt.toISOString(),
});

/** Schema of {@link changelogJson}. */
export const changelogSchema = z.object({
  id: z.number().int(),
  command_type: z.string(),
  from_version: z.string().nullable(),
  to_version: z.string(),
  change_type: z.string(),
  changes: z.unknown(),
  author: z.string().nullable(),
  created_at: z.string(),
});

/** A role. */
export const roleJson = (r: RoleRecord) => ({
  role_name: r.roleName,
  description: r.description,
  permissions: r.permissions,
  is_system: r.isSystem,
  created_at: r.createdAt.toISOString(),
});

/** Schema of {@link roleJson}. */
export const roleSchema = z.object({
  role_name: z.string(),
  description: z.string().nullable(),
  permissions: z.array(z.string()),
  is_system: z.boolean(),
  created_at: z.string(),
});

/** A role assignment. */
export const assignmentJson = (a: RoleAssignmentRecord) => ({
  assignment_id: a.assignmentId,
  principal_type: a.principalType,
  principal_id: a.principalId,
  role_name: a.roleName,
  scope: a.scope,
  granted_by: a.grantedBy,
  created_at: a.createdAt.toISOString(),
  expires_at: iso(a.expiresAt),
});

/** Schema of {@link assignmentJson}. */
export const assignmentSchema = z.object({
  assignment_id: z.uuid(),
  principal_type: z.string(),
  principal_id: z.string(),
  role_name: z.string(),
  scope: z.record(z.string(), z.unknown()),
  granted_by: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
});

/** An authorization policy. */
export const policyJson = (p: AuthorizationPolicyRecord) => ({
  policy_id: p.policyId,
  name: p.name,
  command_type: p.commandType,
  device_filter: p.deviceFilter,
  risk_level: p.riskLevel,
  required_role: p.requiredRole,
  requires_approval: p.requiresApproval,
  min_approvals: p.minApprovals,
  approver_roles: p.approverRoles,
  approval_ttl_seconds: p.approvalTtlSeconds,
  exempt_roles: p.exemptRoles,
  enabled: p.enabled,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

/** Schema of {@link policyJson}. */
export const policySchema = z.object({
  policy_id: z.uuid(),
  name: z.string(),
  command_type: z.string().nullable(),
  device_filter: z.record(z.string(), z.unknown()),
  risk_level: z.string().nullable(),
  required_role: z.string().nullable(),
  requires_approval: z.boolean(),
  min_approvals: z.number().int(),
  approver_roles: z.array(z.string()),
  approval_ttl_seconds: z.number().int(),
  exempt_roles: z.array(z.string()),
  enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** An approval with its responses and the request it holds. */
export const approvalJson = (a: ApprovalRecord) => ({
  approval_id: a.approvalId,
  status: a.status,
  policy_id: a.policyId,
  requested_by: a.requestedBy,
  request: a.commandRequest,
  required_approvals: a.requiredApprovals,
  approvals: a.responses.filter((r) => r.decision === 'APPROVE').length,
  responses: a.responses.map((r) => ({
    approver: r.approver,
    decision: r.decision,
    comment: r.comment,
    created_at: r.createdAt.toISOString(),
  })),
  expires_at: iso(a.expiresAt),
  decided_at: iso(a.decidedAt),
  executed_at: iso(a.executedAt),
  result: a.result,
  created_at: a.createdAt.toISOString(),
});

/** Schema of {@link approvalJson}. */
export const approvalSchema = z.object({
  approval_id: z.uuid(),
  status: z.string(),
  policy_id: z.uuid().nullable(),
  requested_by: z.string(),
  request: z.unknown(),
  required_approvals: z.number().int(),
  approvals: z.number().int(),
  responses: z.array(
    z.object({
      approver: z.string(),
      decision: z.enum(['APPROVE', 'REJECT']),
      comment: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  expires_at: z.string().nullable(),
  decided_at: z.string().nullable(),
  executed_at: z.string().nullable(),
  result: z.unknown(),
  created_at: z.string(),
});

/** A rate-limit rule. */
export const rateLimitRuleJson = (r: RateLimitRuleRecord) => ({
  rule_id: r.ruleId,
  name: r.name,
  scope: r.scope,
  route_pattern: r.routePattern,
  max_requests: r.maxRequests,
  window_seconds: r.windowSeconds,
  burst: r.burst,
  enabled: r.enabled,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});

/** Schema of {@link rateLimitRuleJson}. */
export const rateLimitRuleSchema = z.object({
  rule_id: z.uuid(),
  name: z.string(),
  scope: z.string(),
  route_pattern: z.string(),
  max_requests: z.number().int(),
  window_seconds: z.number().int(),
  /** Most requests per second per subject, on top of the window's limit (null: none). */
  burst: z.number().int().nullable(),
  enabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
