/**
 * Role-based authorization, administered by admins:
 *
 * - `/api/v1/roles` — the system roles (admin, operator, viewer, device; fixed) and custom
 *   roles, which authorization policies can name as the role a command requires or the
 *   roles that may approve it;
 * - `/api/v1/role-assignments` — roles given to an API token (`token`, by token id) or to
 *   every token of an operator name (`user`), optionally scoped to command types and device
 *   types and optionally expiring. An unscoped system role also opens the routes that role
 *   may call (auth/assignedRoles.ts);
 * - `/api/v1/authorization-policies` — which commands need which role and how many
 *   approvers, and whose requests are not held (policies.ts). Two shipped policies hold
 *   high-risk commands and configuration pushes by non-admins until a second person
 *   approves; admins may edit or delete them like any other.
 *
 * Every change is audited in command_audit_log.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { COMMAND_TYPES, ConflictError, type CloudHandle } from '../../runtime/index.js';
import {
  deleteAuthorizationPolicy,
  deleteRole,
  deleteRoleAssignment,
  getAuthorizationPolicy,
  insertAuthorizationPolicy,
  insertRole,
  insertRoleAssignment,
  listAuthorizationPolicies,
  listRoleAssignments,
  listRoles,
  updateAuthorizationPolicy,
  type AuthorizationPolicyFields,
  type AuthorizationPolicyRecord,
} from './store/authorization/index.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { deviceTypeField, policyNameField } from '../fields.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { ROLES_CHANGED, RULES_CHANGED } from './gateReads.js';
import { deviceFilterField } from './policies.js';
import {
  assignmentJson,
  assignmentSchema,
  policyJson,
  policySchema,
  roleJson,
  roleSchema,
} from './present.js';
import { riskLevelField } from './riskLevel.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const ADMIN = ['admin'] as const;

const roleNameField = z
  .string()
  .regex(
    /^[a-z][a-z0-9_.-]{0,49}$/,
    'role names are 1–50 of a–z 0–9 _ . -, starting with a letter',
  );

const roleParams = z.strictObject({ name: roleNameField });
const idParams = z.strictObject({ id: z.uuid() });

const createRoleBody = z.strictObject({
  role_name: roleNameField,
  description: z.string().max(2000).optional(),
  permissions: z.array(z.string().min(1).max(100)).max(100).default([]),
});

const scopeField = z.strictObject({
  command_types: z.array(z.enum(COMMAND_TYPES)).min(1).max(20).optional(),
  device_types: z.array(deviceTypeField).min(1).max(100).optional(),
});

const createAssignmentBody = z.discriminatedUnion('principal_type', [
  z.strictObject({
    principal_type: z.literal('token'),
    principal_id: z.uuid(),
    role_name: roleNameField,
    scope: scopeField.default({}),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  }),
  z.strictObject({
    principal_type: z.literal('user'),
    principal_id: z.string().min(1).max(200),
    role_name: roleNameField,
    scope: scopeField.default({}),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  }),
]);
const assignmentQuery = z.strictObject({
  principal_type: z.enum(['user', 'token']).optional(),
  principal_id: z.string().min(1).max(200).optional(),
  role_name: roleNameField.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const policyBody = z.strictObject({
  name: policyNameField,
  command_type: z.enum(COMMAND_TYPES).nullable().default(null),
  device_filter: deviceFilterField.default({}),
  risk_level: riskLevelField.nullable().default(null),
  required_role: roleNameField.nullable().default(null),
  requires_approval: z.boolean().default(false),
  min_approvals: z.number().int().min(1).max(10).default(1),
  approver_roles: z.array(roleNameField).min(1).max(20).default(['admin']),
  approval_ttl_seconds: z
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(86_400),
  /** Holders of these roles send what the policy covers without approval. */
  exempt_roles: z.array(roleNameField).max(20).default([]),
  enabled: z.boolean().default(true),
});
type PolicyBody = z.output<typeof policyBody>;

const fieldsOf = (body: PolicyBody): AuthorizationPolicyFields => ({
  name: body.name,
  commandType: body.command_type,
  deviceFilter: body.device_filter,
  riskLevel: body.risk_level,
  requiredRole: body.required_role,
  requiresApproval: body.requires_approval,
  minApprovals: body.min_approvals,
  approverRoles: [...new Set(body.approver_roles)],
  approvalTtlSeconds: body.approval_ttl_seconds,
  exemptRoles: [...new Set(body.exempt_roles)],
  enabled: body.enabled,
});

/** 422 UNKNOWN_ROLE unless every role in `names` exists (and none is `device`). */
async function requireRoles(
  h: CloudHandle,
  names: readonly { path: string; name: string }[],
): Promise<void> {
  const known = new Set(
    (
      await listRoles(
        h,
        names.map((n) => n.name),
      )
    ).map((r) => r.roleName),
  );
  const errors = names
    .filter((n) => !known.has(n.name) || n.name === 'device')
    .map((n) => ({
      path: n.path,
      message: n.name === 'device' ? 'the device role is for devices only' : 'no such role',
    }));
  if (errors.length > 0)
    throw new Problem(
      422,
      'UNKNOWN_ROLE',
      `${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      { errors },
    );
}

async function checkPolicyRoles(h: CloudHandle, body: PolicyBody): Promise<void> {
  await requireRoles(h, [
    ...(body.required_role !== null ? [{ path: '$.required_role', name: body.required_role }] : []),
    ...body.approver_roles.map((name, i) => ({ path: `$.approver_roles[${i}]`, name })),
    ...body.exempt_roles.map((name, i) => ({ path: `$.exempt_roles[${i}]`, name })),
  ]);
}

const conflict = (what: string) => (error: unknown) => {
  if (error instanceof ConflictError)
    throw new Problem(409, 'ALREADY_EXISTS', `${what} already exists`);
  throw error;
};

const changedFields = (
  before: AuthorizationPolicyRecord,
  after: AuthorizationPolicyFields,
): string[] => {
  const was: Record<string, unknown> = policyJson(before);
  const now: Record<string, unknown> = {
    name: after.name,
    command_type: after.commandType,
    device_filter: after.deviceFilter,
    risk_level: after.riskLevel,
    required_role: after.requiredRole,
    requires_approval: after.requiresApproval,
    min_approvals: after.minApprovals,
    approver_roles: after.approverRoles,
    approval_ttl_seconds: after.approvalTtlSeconds,
    exempt_roles: after.exemptRoles,
    enabled: after.enabled,
  };
  return Object.keys(now).filter((k) => JSON.stringify(was[k]) !== JSON.stringify(now[k]));
};

/** Register the role, role assignment and authorization policy routes on `ctx`. */
export function registerAuthorizationRoutes(ctx: GatewayContext): void {
  const tags = ['authorization'];

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/roles',
      summary: 'roles: the system roles and custom roles',
      tags,
      access: { roles: READ },
      response: z.object({ roles: z.array(roleSchema) }),
    },
    async () => ({ roles: (await listRoles(ctx.store)).map(roleJson) }),
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/roles',
      summary: 'create a custom role (for authorization policies to name)',
      tags,
      access: { roles: ADMIN },
      body: createRoleBody,
      response: roleSchema,
      status: 201,
      bodyLimit: 64 * 1024,
    },
    async ({ body, principal, request }) => {
      const role = await ctx.store
        .transaction((tx) =>
          insertRole(
            tx,
            {
              roleName: body.role_name,
              description: body.description ?? null,
              permissions: body.permissions,
            },
            auditActor(principal, request),
            ctx.now(),
          ),
        )
        .catch(conflict(`role ${body.role_name}`));
      return roleJson(role);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/roles/:name',
      status: 204,
      summary: 'delete a custom role that nobody holds and no policy names',
      tags,
      access: { roles: ADMIN },
      params: roleParams,
    },
    async ({ params, principal, request }) => {
      const outcome = await ctx.store.transaction((tx) =>
        deleteRole(tx, params.name, auditActor(principal, request), ctx.now()),
      );
      switch (outcome) {
        case 'deleted':
          return undefined;
        case 'not_found':
          throw new Problem(404, 'ROLE_NOT_FOUND', `no role ${params.name}`);
        case 'system':
          throw new Problem(409, 'SYSTEM_ROLE', `${params.name} is a system role`);
        case 'in_use':
          throw new Problem(
            409,
            'ROLE_IN_USE',
            `${params.name} is assigned or named by a policy; remove those first`,
          );
        default: {
          const never: never = outcome;
          return never;
        }
      }
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/role-assignments',
      summary: 'role assignments, newest first',
      tags,
      access: { roles: ADMIN },
      query: assignmentQuery,
      response: z.object({ assignments: z.array(assignmentSchema) }),
    },
    async ({ query }) => ({
      assignments: (
        await listRoleAssignments(ctx.store, {
          limit: query.limit,
          ...(query.principal_type !== undefined ? { principalType: query.principal_type } : {}),
          ...(query.principal_id !== undefined ? { principalId: query.principal_id } : {}),
          ...(query.role_name !== undefined ? { roleName: query.role_name } : {}),
        })
      ).map(assignmentJson),
    }),
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/role-assignments',
      summary: 'give an API token or an operator name a role (optionally scoped and expiring)',
      tags,
      access: { roles: ADMIN },
      body: createAssignmentBody,
      response: assignmentSchema,
      status: 201,
      bodyLimit: 64 * 1024,
    },
    async ({ body, principal, request }) => {
      const now = ctx.now();
      const expiresAt = body.expires_at !== undefined ? new Date(body.expires_at) : null;
      if (expiresAt !== null && expiresAt.getTime() <= now.getTime())
        throw new Problem(422, 'VALIDATION_FAILED', 'expires_at is in the past', {
          errors: [{ path: '$.expires_at', message: 'must be in the future' }],
        });
      const assignment = await ctx.changes
        .transaction(async (tx, changed) => {
          await requireRoles(tx, [{ path: '$.role_name', name: body.role_name }]);
          if (body.principal_type === 'token') {
            const token = await tx.cloud
              .selectFrom('api_tokens')
              .select('token_id')
              .where('token_id', '=', body.principal_id)
              .executeTakeFirst();
            if (!token)
              throw new Problem(422, 'UNKNOWN_TOKEN', `no API token ${body.principal_id}`, {
                errors: [{ path: '$.principal_id', message: 'no such token' }],
              });
          }
          await changed(ROLES_CHANGED);
          return insertRoleAssignment(
            tx,
            {
              assignmentId: randomUUID(),
              principalType: body.principal_type,
              principalId: body.principal_id,
              roleName: body.role_name,
              scope: body.scope,
              expiresAt,
            },
            auditActor(principal, request),
            now,
          );
        })
        .catch(conflict(`that role assignment`));
      return assignmentJson(assignment);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/role-assignments/:id',
      status: 204,
      summary: 'take back a role assignment',
      tags,
      access: { roles: ADMIN },
      params: idParams,
    },
    async ({ params, principal, request }) => {
      const deleted = await ctx.changes.transaction(async (tx, changed) => {
        const gone = await deleteRoleAssignment(
          tx,
          params.id,
          auditActor(principal, request),
          ctx.now(),
        );
        if (gone) await changed(ROLES_CHANGED);
        return gone;
      });
      if (!deleted)
        throw new Problem(404, 'ROLE_ASSIGNMENT_NOT_FOUND', `no role assignment ${params.id}`);
      return undefined;
    },
  );

  const policyTags = ['authorization policies'];
  const policyNotFound = (id: string) =>
    new Problem(404, 'AUTHORIZATION_POLICY_NOT_FOUND', `no authorization policy ${id}`);

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/authorization-policies',
      summary: 'authorization policies by name',
      tags: policyTags,
      access: { roles: READ },
      response: z.object({ policies: z.array(policySchema) }),
    },
    async () => ({ policies: (await listAuthorizationPolicies(ctx.store)).map(policyJson) }),
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/authorization-policies/:id',
      summary: 'one authorization policy',
      tags: policyTags,
      access: { roles: READ },
      params: idParams,
      response: policySchema,
    },
    async ({ params }) => {
      const policy = await getAuthorizationPolicy(ctx.store, params.id);
      if (!policy) throw policyNotFound(params.id);
      return policyJson(policy);
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/authorization-policies',
      summary:
        'create an authorization policy: the role a command needs, and whether it is held for approval',
      tags: policyTags,
      access: { roles: ADMIN },
      body: policyBody,
      response: policySchema,
      status: 201,
      bodyLimit: 128 * 1024,
    },
    async ({ body, principal, request }) => {
      const policy = await ctx.changes
        .transaction(async (tx, changed) => {
          await checkPolicyRoles(tx, body);
          await changed(RULES_CHANGED);
          return insertAuthorizationPolicy(
            tx,
            randomUUID(),
            fieldsOf(body),
            auditActor(principal, request),
            ctx.now(),
          );
        })
        .catch(conflict(`authorization policy ${body.name}`));
      return policyJson(policy);
    },
  );

  route(
    ctx,
    {
      method: 'PUT',
      url: '/api/v1/authorization-policies/:id',
      summary: 'replace an authorization policy (approvals already requested keep their terms)',
      tags: policyTags,
      access: { roles: ADMIN },
      params: idParams,
      body: policyBody,
      response: policySchema,
      bodyLimit: 128 * 1024,
    },
    async ({ params, body, principal, request }) => {
      const policy = await ctx.changes
        .transaction(async (tx, changed) => {
          const before = await getAuthorizationPolicy(tx, params.id);
          if (!before) throw policyNotFound(params.id);
          await checkPolicyRoles(tx, body);
          await changed(RULES_CHANGED);
          const fields = fieldsOf(body);
          return updateAuthorizationPolicy(
            tx,
            params.id,
            fields,
            changedFields(before, fields),
            auditActor(principal, request),
            ctx.now(),
          );
        })
        .catch(conflict(`authorization policy ${body.name}`));
      if (!policy) throw policyNotFound(params.id);
      return policyJson(policy);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/authorization-policies/:id',
      status: 204,
      summary: 'delete an authorization policy',
      tags: policyTags,
      access: { roles: ADMIN },
      params: idParams,
    },
    async ({ params, principal, request }) => {
      const deleted = await ctx.changes.transaction(async (tx, changed) => {
        const gone = await deleteAuthorizationPolicy(
          tx,
          params.id,
          auditActor(principal, request),
          ctx.now(),
        );
        if (gone) await changed(RULES_CHANGED);
        return gone;
      });
      if (!deleted) throw policyNotFound(params.id);
      return undefined;
    },
  );
}
