/**
 * Audit retention policies (`/api/v1/audit/retention-policies`), admin only: create, list,
 * read, change, delete — each audited — and `POST /api/v1/audit/purge`, which enforces every
 * enabled policy now (the job also does it on its schedule; retentionJob.ts). A policy
 * governs one table of RETENTION_TABLES for `retention_days` days, optionally only some
 * event types (not for workflow_execution_logs, whose rows have none). Archiving before
 * deletion is not offered: `archive` is always false.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConflictError } from '../../runtime/index.js';
import {
  deleteRetentionPolicy,
  EVENT_TYPED_RETENTION_TABLES,
  getRetentionPolicy,
  insertRetentionPolicy,
  listRetentionPolicies,
  RETENTION_TABLES,
  updateRetentionPolicy,
  type RetentionPolicyRecord,
  type RetentionTable,
} from './store/retention/index.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { isoOrNull } from '../fields.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import type { RetentionJob, RetentionResult } from './retentionJob.js';

const ADMIN = ['admin'] as const;
const tags = ['audit'];

const nameField = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,199}$/, 'names are 1–200 of A–Z a–z 0–9 space . _ -');
const daysField = z.number().int().min(1).max(36_500);
const eventTypesField = z
  .array(z.string().regex(/^[A-Za-z][A-Za-z0-9_.]{0,99}$/, 'an event type'))
  .max(50);
const createBody = z.strictObject({
  name: nameField,
  table_name: z.enum(RETENTION_TABLES),
  retention_days: daysField,
  event_types: eventTypesField.default([]),
  enabled: z.boolean().default(true),
});
const patchBody = z
  .strictObject({
    retention_days: daysField.optional(),
    event_types: eventTypesField.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'nothing to change' });
const idParams = z.strictObject({ id: z.uuid() });

const policySchema = z.object({
  policy_id: z.uuid(),
  name: z.string(),
  table_name: z.enum(RETENTION_TABLES),
  retention_days: z.number().int(),
  event_types: z.array(z.string()),
  archive: z.boolean(),
  enabled: z.boolean(),
  last_run_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const purgeSchema = z.object({
  policy_id: z.uuid(),
  name: z.string(),
  table_name: z.enum(RETENTION_TABLES).optional(),
  cutoff: z.string().optional(),
  deleted: z.number().int().optional(),
  error: z.string().optional(),
});

const policyJson = (p: RetentionPolicyRecord): z.infer<typeof policySchema> => ({
  policy_id: p.policyId,
  name: p.name,
  table_name: p.tableName,
  retention_days: p.retentionDays,
  event_types: p.eventTypes,
  archive: p.archive,
  enabled: p.enabled,
  last_run_at: isoOrNull(p.lastRunAt),
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

const purgeJson = (r: RetentionResult): z.infer<typeof purgeSchema> =>
  'error' in r
    ? { policy_id: r.policyId, name: r.name, error: r.error }
    : {
        policy_id: r.policyId,
        name: r.name,
        table_name: r.tableName,
        cutoff: r.cutoff.toISOString(),
        deleted: r.deleted,
      };

const notFound = (id: string) =>
  new Problem(404, 'RETENTION_POLICY_NOT_FOUND', `no retention policy ${id}`);

function checkEventTypes(table: RetentionTable, eventTypes: readonly string[]): void {
  if (eventTypes.length > 0 && !EVENT_TYPED_RETENTION_TABLES.includes(table))
    throw new Problem(
      422,
      'EVENT_TYPES_NOT_SUPPORTED',
      `rows of ${table} have no event type; a policy for it must not list event_types`,
    );
}

/** Register the retention routes on `ctx`; purges run through `job`. */
export function registerRetentionRoutes(ctx: GatewayContext, job: RetentionJob): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/audit/retention-policies',
      summary: 'create an audit retention policy (rows older than retention_days are purged)',
      tags,
      access: { roles: ADMIN },
      body: createBody,
      response: policySchema,
      status: 201,
    },
    async ({ body, principal, request }) => {
      checkEventTypes(body.table_name, body.event_types);
      try {
        const policy = await ctx.store.transaction((tx) =>
          insertRetentionPolicy(
            tx,
            {
              policyId: randomUUID(),
              name: body.name,
              tableName: body.table_name,
              retentionDays: body.retention_days,
              eventTypes: body.event_types,
              enabled: body.enabled,
            },
            auditActor(principal, request),
            ctx.now(),
          ),
        );
        return policyJson(policy);
      } catch (error) {
        if (error instanceof ConflictError)
          throw new Problem(409, 'POLICY_NAME_TAKEN', `a retention policy '${body.name}' exists`);
        throw error;
      }
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/audit/retention-policies',
      summary: 'every audit retention policy, by name',
      tags,
      access: { roles: ADMIN },
      response: z.object({ policies: z.array(policySchema) }),
    },
    async () => ({ policies: (await listRetentionPolicies(ctx.store)).map(policyJson) }),
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/audit/retention-policies/:id',
      summary: 'an audit retention policy',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      response: policySchema,
    },
    async ({ params }) => {
      const policy = await getRetentionPolicy(ctx.store, params.id);
      if (!policy) throw notFound(params.id);
      return policyJson(policy);
    },
  );

  route(
    ctx,
    {
      method: 'PATCH',
      url: '/api/v1/audit/retention-policies/:id',
      summary: 'change a retention policy (retention_days, event_types, enabled)',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      body: patchBody,
      response: policySchema,
    },
    async ({ params, body, principal, request }) => {
      const policy = await ctx.store.transaction(async (tx) => {
        const current = await getRetentionPolicy(tx, params.id);
        if (!current) throw notFound(params.id);
        if (body.event_types) checkEventTypes(current.tableName, body.event_types);
        const updated = await updateRetentionPolicy(
          tx,
          params.id,
          {
            ...(body.retention_days !== undefined ? { retentionDays: body.retention_days } : {}),
            ...(body.event_types !== undefined ? { eventTypes: body.event_types } : {}),
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          },
          auditActor(principal, request),
          ctx.now(),
        );
        if (!updated) throw notFound(params.id);
        return updated;
      });
      return policyJson(policy);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/audit/retention-policies/:id',
      status: 204,
      summary: 'delete a retention policy (rows it would purge are kept from now on)',
      tags,
      access: { roles: ADMIN },
      params: idParams,
    },
    async ({ params, principal, request }) => {
      const deleted = await ctx.store.transaction((tx) =>
        deleteRetentionPolicy(tx, params.id, auditActor(principal, request), ctx.now()),
      );
      if (!deleted) throw notFound(params.id);
      return undefined;
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/audit/purge',
      summary:
        'enforce every enabled retention policy now; each purge is audited (AUDIT_PURGED with the count)',
      tags,
      access: { roles: ADMIN },
      response: z.object({ purges: z.array(purgeSchema) }),
    },
    async ({ principal, request }) => {
      const results = await job.run(auditActor(principal, request));
      if (!results)
        throw new Problem(
          409,
          'PURGE_RUNNING',
          'another gateway is purging right now; try again when it is done',
        );
      return { purges: results.map(purgeJson) };
    },
  );
}
