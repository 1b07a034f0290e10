/**
 * Business and fraud policies (operators manage, viewers read). A policy is a named list of
 * rules; changing its rules (`PUT`) adds version n + 1, and the newest version is the one
 * in force. Enabling or disabling switches that newest version without a new one. Devices
 * receive fraud policies through `GET /api/v1/config/fraud-rules`.
 *
 * A rule: `{id?, field, op, value, action, description?}` — `field` a dotted path into the
 * transaction (`amount_minor`, `card.country`), `op` one of eq ne gt gte lt lte in not_in
 * (`in`/`not_in` take an array, the ordering operators a number), `action` allow | review |
 * decline.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConflictError, POLICY_TYPES } from '../../runtime/index.js';
import { addPolicyVersion } from '../config/store/policies/addPolicyVersion.js';
import { deletePolicy } from '../config/store/policies/deletePolicy.js';
import { getPolicy } from '../config/store/policies/getPolicy.js';
import { insertPolicy } from '../config/store/policies/insertPolicy.js';
import { listPolicies } from '../config/store/policies/listPolicies.js';
import { listPolicyVersions } from '../config/store/policies/listPolicyVersions.js';
import { type PolicyRecord } from '../config/store/policies/policy.js';
import { setPolicyEnabled } from '../config/store/policies/setPolicyEnabled.js';
import type { Principal } from '../auth/principal.js';
import type { GatewayContext } from '../context.js';
import { policyNameField, versionQueryField } from '../fields.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;

/** Operators of a rule. */
export const RULE_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in'] as const;
/** What a matching rule asks for. */
export const RULE_ACTIONS = ['allow', 'review', 'decline'] as const;

const scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

const ruleSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,100}$/)
      .optional(),
    field: z
      .string()
      .max(200)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/, 'a dotted field path'),
    op: z.enum(RULE_OPS),
    value: z.union([scalar, z.array(scalar).max(1000)]),
    action: z.enum(RULE_ACTIONS),
    description: z.string().max(500).optional(),
  })
  .superRefine((rule, issues) => {
    const list = rule.op === 'in' || rule.op === 'not_in';
    if (list !== Array.isArray(rule.value))
      issues.addIssue({
        code: 'custom',
        path: ['value'],
        message: list ? `'${rule.op}' takes an array` : `'${rule.op}' takes a single value`,
      });
    else if (['gt', 'gte', 'lt', 'lte'].includes(rule.op) && typeof rule.value !== 'number')
      issues.addIssue({ code: 'custom', path: ['value'], message: `'${rule.op}' takes a number` });
  });

const rulesField = z.array(ruleSchema).max(1000);

const nameParams = z.strictObject({ name: policyNameField });

const createBody = z.strictObject({
  name: policyNameField,
  policy_type: z.enum(POLICY_TYPES),
  rules: rulesField,
  enabled: z.boolean().optional(),
  description: z.string().max(2000).optional(),
});

const reviseBody = z.strictObject({
  rules: rulesField,
  enabled: z.boolean().optional(),
  description: z.string().max(2000).optional(),
});

const policyResponse = z.object({
  policy_id: z.string(),
  name: z.string(),
  policy_type: z.enum(POLICY_TYPES),
  version: z.number(),
  rules: z.array(z.unknown()),
  enabled: z.boolean(),
  description: z.string().nullable(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const policyJson = (policy: PolicyRecord): z.infer<typeof policyResponse> => ({
  policy_id: policy.policyId,
  name: policy.name,
  policy_type: policy.policyType,
  version: policy.version,
  rules: policy.rules,
  enabled: policy.enabled,
  description: policy.description,
  created_by: policy.createdBy,
  created_at: policy.createdAt.toISOString(),
  updated_at: policy.updatedAt.toISOString(),
});

const notFound = (name: string) => new Problem(404, 'POLICY_NOT_FOUND', `no policy '${name}'`);
const actor = (principal: Principal) =>
  principal.kind === 'user' ? principal.name : principal.deviceId;

/** Any policy change may change any device's fraud rules: cached tags go on every gateway. */
const FRAUD_RULES_CHANGED = { kind: 'documents' } as const;

/** Register the policy routes. */
export function registerPolicyRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/policies',
      summary: 'create a policy (version 1)',
      tags: ['policies'],
      access: { roles: MANAGE },
      body: createBody,
      response: policyResponse,
      status: 201,
    },
    async ({ body, principal }) => {
      try {
        const policy = await ctx.changes.transaction(async (tx, changed) => {
          const inserted = await insertPolicy(
            tx,
            {
              policyId: randomUUID(),
              name: body.name,
              policyType: body.policy_type,
              rules: body.rules,
              ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
              ...(body.description !== undefined ? { description: body.description } : {}),
              createdBy: actor(principal),
            },
            ctx.now(),
          );
          await changed(FRAUD_RULES_CHANGED);
          return inserted;
        });
        return policyJson(policy);
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(409, 'POLICY_EXISTS', `a policy named '${body.name}' exists`);
        throw error;
      }
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/policies',
      summary: 'list policies (newest version of each), by type and enabled state',
      tags: ['policies'],
      access: { roles: READ },
      query: z.strictObject({
        policy_type: z.enum(POLICY_TYPES).optional(),
        enabled: z
          .enum(['true', 'false'])
          .transform((v) => v === 'true')
          .optional(),
      }),
      response: z.object({ policies: z.array(policyResponse) }),
    },
    async ({ query }) => ({
      policies: (
        await listPolicies(ctx.store, {
          ...(query.policy_type ? { policyType: query.policy_type } : {}),
          ...(query.enabled !== undefined ? { enabled: query.enabled } : {}),
        })
      ).map(policyJson),
    }),
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/policies/:name',
      summary: 'a policy: its newest version, or ?version=n',
      tags: ['policies'],
      access: { roles: READ },
      params: nameParams,
      query: z.strictObject({ version: versionQueryField.optional() }),
      response: policyResponse,
    },
    async ({ params, query }) => {
      const policy = await getPolicy(ctx.store, params.name, query.version);
      if (!policy) throw notFound(params.name);
      return policyJson(policy);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/policies/:name/versions',
      summary: 'every version of a policy, newest first',
      tags: ['policies'],
      access: { roles: READ },
      params: nameParams,
      response: z.object({ versions: z.array(policyResponse) }),
    },
    async ({ params }) => {
      const versions = await listPolicyVersions(ctx.store, params.name);
      if (versions.length === 0) throw notFound(params.name);
      return { versions: versions.map(policyJson) };
    },
  );

  route(
    ctx,
    {
      method: 'PUT',
      url: '/api/v1/policies/:name',
      summary: "replace a policy's rules: adds version n + 1",
      tags: ['policies'],
      access: { roles: MANAGE },
      params: nameParams,
      body: reviseBody,
      response: policyResponse,
    },
    async ({ params, body, principal }) => {
      try {
        const policy = await ctx.changes.transaction(async (tx, changed) => {
          const added = await addPolicyVersion(
            tx,
            params.name,
            {
              policyId: randomUUID(),
              rules: body.rules,
              ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
              ...(body.description !== undefined ? { description: body.description } : {}),
              createdBy: actor(principal),
            },
            ctx.now(),
          );
          if (added) await changed(FRAUD_RULES_CHANGED);
          return added;
        });
        if (!policy) throw notFound(params.name);
        return policyJson(policy);
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(
            409,
            'VERSION_CONFLICT',
            'another version of this policy was created at the same time; retry',
          );
        throw error;
      }
    },
  );

  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    route(
      ctx,
      {
        method: 'POST',
        url: `/api/v1/policies/:name/${verb}`,
        summary: `${verb} a policy (its newest version; no new version)`,
        tags: ['policies'],
        access: { roles: MANAGE },
        params: nameParams,
        response: policyResponse,
      },
      async ({ params }) => {
        const policy = await ctx.changes.transaction(async (tx, changed) => {
          const set = await setPolicyEnabled(tx, params.name, enabled, ctx.now());
          if (set) await changed(FRAUD_RULES_CHANGED);
          return set;
        });
        if (!policy) throw notFound(params.name);
        return policyJson(policy);
      },
    );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/policies/:name',
      status: 204,
      summary: 'delete a policy (every version) and the assignments that name it',
      tags: ['policies'],
      access: { roles: MANAGE },
      params: nameParams,
    },
    async ({ params }) => {
      const deleted = await ctx.changes.transaction(async (tx, changed) => {
        const gone = await deletePolicy(tx, params.name);
        if (gone) await changed(FRAUD_RULES_CHANGED);
        return gone;
      });
      if (!deleted) throw notFound(params.name);
      return undefined;
    },
  );
}
