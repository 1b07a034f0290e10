/**
 * Probes and documents: `/healthz` (the process answers), `/readyz` (the database answers),
 * `/metrics` (Prometheus; operators only), `/api/v1/openapi.json` (the API description).
 * The probes and the document carry nothing secret and are public.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import type { GatewayContext } from '../context.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';

/** Register the core routes. */
export function registerCoreRoutes(ctx: GatewayContext, version: string): void {
  route(
    ctx,
    {
      method: 'GET',
      url: '/healthz',
      summary: 'liveness',
      tags: ['ops'],
      access: { public: true },
      response: z.object({ status: z.literal('ok') }),
    },
    () => Promise.resolve({ status: 'ok' }),
  );
  route(
    ctx,
    {
      method: 'GET',
      url: '/readyz',
      summary: 'readiness (database reachable)',
      tags: ['ops'],
      access: { public: true },
      response: z.object({ status: z.literal('ready') }),
    },
    async () => {
      try {
        await sql`SELECT 1`.execute(ctx.store.db);
      } catch {
        throw new Problem(503, 'NOT_READY', 'the database does not answer');
      }
      return { status: 'ready' };
    },
  );
  route(
    ctx,
    {
      method: 'GET',
      url: '/metrics',
      summary: 'Prometheus metrics',
      tags: ['ops'],
      access: { roles: ['admin', 'operator', 'viewer'] },
      mediaTypes: ['text/plain'],
    },
    async ({ reply }) => reply.type(ctx.metrics.contentType).send(await ctx.metrics.metrics()),
  );
  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/openapi.json',
      summary: 'this API as OpenAPI 3.1',
      tags: ['ops'],
      access: { public: true },
      response: z.record(z.string(), z.unknown()),
    },
    () => Promise.resolve(ctx.openapi.document(version)),
  );
}
