/**
 * Rate-limit rules (`/api/v1/rate-limits`), administered by admins: per device, per API
 * token, per operator name or for everyone, over the requests matching an endpoint pattern
 * (routePattern.ts), enforced by every gateway (rateLimiter.ts). A pattern must match at
 * least one route this gateway serves, so a typo does not silently limit nothing. Changes
 * are audited and take effect on this gateway at once, on the others within their rule
 * refresh interval.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConflictError } from '../../runtime/index.js';
import {
  deleteRateLimitRule,
  getRateLimitRule,
  insertRateLimitRule,
  listRateLimitRules,
  listRateLimitUsage,
  RATE_LIMIT_SCOPES,
  updateRateLimitRule,
  type RateLimitRuleFields,
} from './store/rateLimits/index.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { policyNameField } from '../fields.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { rateLimitRuleJson, rateLimitRuleSchema } from './present.js';
import { matchesRoute, parseRoutePattern, routePatternField } from './routePattern.js';

const ADMIN = ['admin'] as const;
const tags = ['rate limits'];

const idParams = z.strictObject({ id: z.uuid() });
const limits = {
  max_requests: z.number().int().min(1).max(1_000_000_000),
  window_seconds: z.number().int().min(1).max(86_400),
  /** Most requests per second per subject on top of the window's limit; null for none. */
  burst: z.number().int().min(1).max(1_000_000_000).nullable(),
};
const createBody = z.strictObject({
  name: policyNameField,
  scope: z.enum(RATE_LIMIT_SCOPES),
  route_pattern: routePatternField.default('*'),
  max_requests: limits.max_requests,
  window_seconds: limits.window_seconds,
  burst: limits.burst.default(null),
  enabled: z.boolean().default(true),
});
const patchBody = z
  .strictObject({
    name: policyNameField.optional(),
    scope: z.enum(RATE_LIMIT_SCOPES).optional(),
    route_pattern: routePatternField.optional(),
    max_requests: limits.max_requests.optional(),
    window_seconds: limits.window_seconds.optional(),
    burst: limits.burst.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'name at least one field to change');
const usageSchema = z.object({
  window_start: z.string(),
  subjects: z.array(z.object({ subject: z.string(), count: z.number().int() })),
});

/** Register the rate-limit rule routes on `ctx`. */
export function registerRateLimitRoutes(ctx: GatewayContext): void {
  let served: { method: string; template: string }[] | undefined;
  const servedRoutes = () =>
    (served ??= Object.entries(
      (ctx.openapi.document('') as { paths: Record<string, Record<string, unknown>> }).paths,
    ).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({
        method: method.toUpperCase(),
        template: path.replace(/\{([^}]+)\}/g, ':$1'),
      })),
    ));

  /** 422 UNKNOWN_ROUTE_PATTERN unless `pattern` matches a route this gateway serves. */
  const requireServed = (pattern: string) => {
    const parsed = parseRoutePattern(pattern);
    const hit = servedRoutes().some((r) => {
      const segments = r.template.split('/');
      // a literal where the route has a parameter stands for that parameter's value
      const wanted = parsed.segments ? ['', ...parsed.segments] : [];
      const path = segments
        .map((s, i) => (s.startsWith(':') && wanted[i] !== undefined ? wanted[i] : s))
        .join('/');
      return matchesRoute(parsed, { method: r.method, template: r.template, path });
    });
    if (!hit)
      throw new Problem(422, 'UNKNOWN_ROUTE_PATTERN', `'${pattern}' matches no route of this API`, {
        errors: [{ path: '$.route_pattern', message: 'matches no route' }],
      });
  };

  /** 422 when a burst would admit more than the window's whole limit. */
  const requireSaneBurst = (fields: RateLimitRuleFields) => {
    if (fields.burst !== null && fields.burst > fields.maxRequests)
      throw new Problem(
        422,
        'INVALID_REQUEST',
        `burst ${fields.burst} is larger than max_requests ${fields.maxRequests}`,
        { errors: [{ path: '$.burst', message: 'must not exceed max_requests' }] },
      );
  };

  const notFound = (id: string) =>
    new Problem(404, 'RATE_LIMIT_RULE_NOT_FOUND', `no rate-limit rule ${id}`);
  const conflict = (name: string) => (error: unknown) => {
    if (error instanceof ConflictError)
      throw new Problem(409, 'ALREADY_EXISTS', `a rate-limit rule named ${name} already exists`);
    throw error;
  };

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/rate-limits',
      summary: 'rate-limit rules by name',
      tags,
      access: { roles: ADMIN },
      response: z.object({ rules: z.array(rateLimitRuleSchema) }),
    },
    async () => ({ rules: (await listRateLimitRules(ctx.store)).map(rateLimitRuleJson) }),
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/rate-limits',
      summary: 'create a rate-limit rule (per device, API token, operator or everyone)',
      tags,
      access: { roles: ADMIN },
      body: createBody,
      response: rateLimitRuleSchema,
      status: 201,
      bodyLimit: 16 * 1024,
    },
    async ({ body, principal, request }) => {
      requireServed(body.route_pattern);
      const fields: RateLimitRuleFields = {
        name: body.name,
        scope: body.scope,
        routePattern: body.route_pattern,
        maxRequests: body.max_requests,
        windowSeconds: body.window_seconds,
        burst: body.burst,
        enabled: body.enabled,
      };
      requireSaneBurst(fields);
      const rule = await ctx.store
        .transaction((tx) =>
          insertRateLimitRule(tx, randomUUID(), fields, auditActor(principal, request), ctx.now()),
        )
        .catch(conflict(body.name));
      ctx.rateLimits.invalidate();
      return rateLimitRuleJson(rule);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/rate-limits/:id',
      summary: "a rate-limit rule and its current window's busiest subjects",
      tags,
      access: { roles: ADMIN },
      params: idParams,
      response: rateLimitRuleSchema.extend({ usage: usageSchema }),
    },
    async ({ params }) => {
      const rule = await getRateLimitRule(ctx.store, params.id);
      if (!rule) throw notFound(params.id);
      const windowMs = rule.windowSeconds * 1000;
      const windowStart = new Date(Math.floor(ctx.now().getTime() / windowMs) * windowMs);
      const usage = await listRateLimitUsage(ctx.store, rule.ruleId, windowStart);
      return {
        ...rateLimitRuleJson(rule),
        usage: {
          window_start: windowStart.toISOString(),
          // reserved budget: at most one slice per gateway more than was actually spent
          subjects: usage.map((u) => ({
            subject: u.subjectKey,
            count: Math.min(u.count, rule.maxRequests),
          })),
        },
      };
    },
  );

  route(
    ctx,
    {
      method: 'PATCH',
      url: '/api/v1/rate-limits/:id',
      summary: 'change a rate-limit rule',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      body: patchBody,
      response: rateLimitRuleSchema,
      bodyLimit: 16 * 1024,
    },
    async ({ params, body, principal, request }) => {
      if (body.route_pattern !== undefined) requireServed(body.route_pattern);
      const rule = await ctx.store
        .transaction(async (tx) => {
          const before = await getRateLimitRule(tx, params.id);
          if (!before) throw notFound(params.id);
          const fields: RateLimitRuleFields = {
            name: body.name ?? before.name,
            scope: body.scope ?? before.scope,
            routePattern: body.route_pattern ?? before.routePattern,
            maxRequests: body.max_requests ?? before.maxRequests,
            windowSeconds: body.window_seconds ?? before.windowSeconds,
            burst: body.burst !== undefined ? body.burst : before.burst,
            enabled: body.enabled ?? before.enabled,
          };
          requireSaneBurst(fields);
          return updateRateLimitRule(
            tx,
            params.id,
            fields,
            auditActor(principal, request),
            ctx.now(),
          );
        })
        .catch(conflict(body.name ?? params.id));
      if (!rule) throw notFound(params.id);
      ctx.rateLimits.invalidate();
      return rateLimitRuleJson(rule);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/rate-limits/:id',
      status: 204,
      summary: 'delete a rate-limit rule and its counters',
      tags,
      access: { roles: ADMIN },
      params: idParams,
    },
    async ({ params, principal, request }) => {
      const deleted = await ctx.store.transaction((tx) =>
        deleteRateLimitRule(tx, params.id, auditActor(principal, request), ctx.now()),
      );
      if (!deleted) throw notFound(params.id);
      ctx.rateLimits.invalidate();
      return undefined;
    },
  );
}
