/**
 * Webhook routes (`/api/v1/webhooks`), admin only: registrations (create answers the signing
 * secret once; list, read, change, delete; rotate the secret), the catalogue of event
 * kinds, each registration's deliveries with filters and their attempt history, and manual
 * redelivery of a FAILED or DEAD delivery. Every change is audited in command_audit_log —
 * with the URL's origin and path only (a query string may hold a receiver's token), never
 * the secret.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATUSES, type CloudHandle } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import {
  countWebhookDeliveries,
  deleteWebhook,
  getWebhook,
  getWebhookDelivery,
  insertWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhookDelivery,
  updateWebhook,
  WEBHOOK_EVENT_KINDS,
} from './store/webhooks/index.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { decodeCursor, encodeCursor } from '../fleet/cursor.js';
import { decodeNumberCursor, encodeNumberCursor } from '../numberCursor.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { timeQueryField } from '../timeQuery.js';
import {
  deliveryJson,
  deliverySchema,
  webhookDetailJson,
  webhookDetailSchema,
  webhookJson,
  webhookSchema,
} from './present.js';
import { newWebhookSecret } from './signature.js';
import { assertWebhookDestination } from './destination.js';

const ADMIN = ['admin'] as const;
const tags = ['webhooks'];

/** Most retries a registration may ask for (30 s doubling, capped at 6 h: about 5 days). */
const MAX_RETRIES = 25;

const urlField = z
  .string()
  .max(2000)
  .refine(
    (text) => {
      try {
        const url = new URL(text);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.username === '' &&
          url.password === ''
        );
      } catch {
        return false;
      }
    },
    { message: 'an http or https URL without user name or password' },
  );
const eventTypesField = z
  .array(z.enum(WEBHOOK_EVENT_KINDS))
  .min(1)
  .max(WEBHOOK_EVENT_KINDS.length)
  .refine((kinds) => new Set(kinds).size === kinds.length, { message: 'listed twice' });
const nameField = z.string().min(1).max(200);
const maxRetriesField = z.number().int().min(0).max(MAX_RETRIES);

const createBody = z.strictObject({
  name: nameField.optional(),
  url: urlField,
  event_types: eventTypesField,
  active: z.boolean().default(true),
  max_retries: maxRetriesField.default(10),
});
const patchBody = z
  .strictObject({
    name: nameField.nullable().optional(),
    url: urlField.optional(),
    event_types: eventTypesField.optional(),
    active: z.boolean().optional(),
    max_retries: maxRetriesField.optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'nothing to change',
  });
const idParams = z.strictObject({ id: z.uuid() });
const deliveryParams = z.strictObject({ id: z.uuid(), delivery_id: z.uuid() });
const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(200).optional(),
});
const deliveriesQuery = z.strictObject({
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  event_type: z.enum(WEBHOOK_EVENT_KINDS).optional(),
  event_id: z.uuid().optional(),
  since: timeQueryField.optional(),
  until: timeQueryField.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(40).optional(),
});

const notFound = (id: string) => new Problem(404, 'WEBHOOK_NOT_FOUND', `no webhook ${id}`);

/** A URL as audit rows keep it: origin and path, without a query that may hold a token. */
function auditedUrl(text: string): string {
  const url = new URL(text);
  return `${url.origin}${url.pathname}`;
}

async function audit(
  h: CloudHandle,
  actor: CommandActor,
  event:
    | 'WEBHOOK_CREATED'
    | 'WEBHOOK_UPDATED'
    | 'WEBHOOK_DELETED'
    | 'WEBHOOK_SECRET_ROTATED'
    | 'WEBHOOK_DELIVERY_REDELIVERED',
  details: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await appendCommandAudit(h, actor, [{ event, details }], now);
}

/** Register the webhook routes on `ctx`. */
export function registerWebhookRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/webhooks/event-types',
      summary: 'the event kinds a webhook can subscribe to',
      tags,
      access: { roles: ['admin', 'operator', 'viewer'] },
      response: z.object({ event_types: z.array(z.enum(WEBHOOK_EVENT_KINDS)) }),
    },
    () => Promise.resolve({ event_types: [...WEBHOOK_EVENT_KINDS] }),
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/webhooks',
      summary:
        'register a webhook; the answer carries its signing secret, shown this once (store it)',
      tags,
      access: { roles: ADMIN },
      body: createBody,
      response: webhookSchema.extend({ secret: z.string() }),
      status: 201,
    },
    async ({ body, principal, request }) => {
      assertWebhookDestination(ctx.destinations, body.url);
      const secret = newWebhookSecret();
      const by = auditActor(principal, request);
      const now = ctx.now();
      const created = await ctx.store.transaction(async (tx) => {
        const webhook = await insertWebhook(
          tx,
          {
            webhookId: randomUUID(),
            name: body.name ?? null,
            url: body.url,
            eventTypes: body.event_types,
            secretCiphertext: ctx.keys.seal(secret),
            active: body.active,
            maxRetries: body.max_retries,
            createdBy: by.actor,
          },
          now,
        );
        await audit(
          tx,
          by,
          'WEBHOOK_CREATED',
          {
            webhook_id: webhook.webhookId,
            name: webhook.name,
            url: auditedUrl(webhook.url),
            event_types: webhook.eventTypes,
            active: webhook.active,
            max_retries: webhook.maxRetries,
          },
          now,
        );
        return webhook;
      });
      return { ...webhookJson(created), secret };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/webhooks',
      summary: 'list webhooks, oldest first (keyset paging with cursor); secrets are never shown',
      tags,
      access: { roles: ADMIN },
      query: listQuery,
      response: z.object({ webhooks: z.array(webhookSchema), next_cursor: z.string().nullable() }),
    },
    async ({ query }) => {
      const after = query.cursor ? decodeCursor(query.cursor) : undefined;
      const rows = await listWebhooks(ctx.store, {
        limit: query.limit + 1,
        ...(after ? { after } : {}),
      });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        webhooks: page.map(webhookJson),
        next_cursor:
          rows.length > query.limit && last ? encodeCursor(last.createdAt, last.webhookId) : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/webhooks/:id',
      summary: 'a webhook, with its deliveries counted by status',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      response: webhookDetailSchema,
    },
    async ({ params }) => {
      const webhook = await getWebhook(ctx.store, params.id);
      if (!webhook) throw notFound(params.id);
      return webhookDetailJson(webhook, await countWebhookDeliveries(ctx.store, params.id));
    },
  );

  route(
    ctx,
    {
      method: 'PATCH',
      url: '/api/v1/webhooks/:id',
      summary:
        'change a webhook (name, url, event types, active, max retries); applies from the next event',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      body: patchBody,
      response: webhookSchema,
    },
    async ({ params, body, principal, request }) => {
      if (body.url !== undefined) assertWebhookDestination(ctx.destinations, body.url);
      const by = auditActor(principal, request);
      const now = ctx.now();
      const updated = await ctx.store.transaction(async (tx) => {
        const webhook = await updateWebhook(
          tx,
          params.id,
          {
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.url !== undefined ? { url: body.url } : {}),
            ...(body.event_types !== undefined ? { eventTypes: body.event_types } : {}),
            ...(body.active !== undefined ? { active: body.active } : {}),
            ...(body.max_retries !== undefined ? { maxRetries: body.max_retries } : {}),
          },
          now,
        );
        if (!webhook) throw notFound(params.id);
        await audit(
          tx,
          by,
          'WEBHOOK_UPDATED',
          {
            webhook_id: webhook.webhookId,
            changed: Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined),
            url: auditedUrl(webhook.url),
            event_types: webhook.eventTypes,
            active: webhook.active,
            max_retries: webhook.maxRetries,
          },
          now,
        );
        return webhook;
      });
      return webhookJson(updated);
    },
  );

  route(
    ctx,
    {
      method: 'DELETE',
      url: '/api/v1/webhooks/:id',
      status: 204,
      summary: 'delete a webhook and its delivery history',
      tags,
      access: { roles: ADMIN },
      params: idParams,
    },
    async ({ params, principal, request }) => {
      const by = auditActor(principal, request);
      const now = ctx.now();
      await ctx.store.transaction(async (tx) => {
        const webhook = await getWebhook(tx, params.id);
        if (!webhook || !(await deleteWebhook(tx, params.id))) throw notFound(params.id);
        await audit(
          tx,
          by,
          'WEBHOOK_DELETED',
          { webhook_id: params.id, name: webhook.name, url: auditedUrl(webhook.url) },
          now,
        );
      });
      return undefined;
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/webhooks/:id/rotate-secret',
      summary:
        'replace the signing secret; the new one is shown this once and signs every request from now on',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      response: z.object({ webhook_id: z.uuid(), secret: z.string() }),
    },
    async ({ params, principal, request }) => {
      const secret = newWebhookSecret();
      const by = auditActor(principal, request);
      const now = ctx.now();
      await ctx.store.transaction(async (tx) => {
        const webhook = await updateWebhook(
          tx,
          params.id,
          { secretCiphertext: ctx.keys.seal(secret) },
          now,
        );
        if (!webhook) throw notFound(params.id);
        await audit(tx, by, 'WEBHOOK_SECRET_ROTATED', { webhook_id: params.id }, now);
      });
      return { webhook_id: params.id, secret };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/webhooks/:id/deliveries',
      summary:
        'deliveries of a webhook, newest first, by status, event type, event id and creation time',
      tags,
      access: { roles: ADMIN },
      params: idParams,
      query: deliveriesQuery,
      response: z.object({
        deliveries: z.array(deliverySchema),
        next_cursor: z.string().nullable(),
      }),
    },
    async ({ params, query }) => {
      if (!(await getWebhook(ctx.store, params.id))) throw notFound(params.id);
      const rows = await listWebhookDeliveries(ctx.store, {
        webhookId: params.id,
        limit: query.limit + 1,
        ...(query.status ? { status: query.status } : {}),
        ...(query.event_type ? { eventType: query.event_type } : {}),
        ...(query.event_id ? { eventId: query.event_id } : {}),
        ...(query.since ? { since: new Date(query.since) } : {}),
        ...(query.until ? { until: new Date(query.until) } : {}),
        ...(query.cursor ? { beforeSequence: decodeNumberCursor(query.cursor) } : {}),
      });
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        deliveries: page.map(deliveryJson),
        next_cursor: rows.length > query.limit && last ? encodeNumberCursor(last.sequence) : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/webhooks/:id/deliveries/:delivery_id',
      summary: 'one delivery, with the history of its attempts',
      tags,
      access: { roles: ADMIN },
      params: deliveryParams,
      response: deliverySchema,
    },
    async ({ params }) => {
      const delivery = await getWebhookDelivery(ctx.store, params.id, params.delivery_id);
      if (!delivery)
        throw new Problem(
          404,
          'DELIVERY_NOT_FOUND',
          `webhook ${params.id} has no delivery ${params.delivery_id}`,
        );
      return deliveryJson(delivery);
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/webhooks/:id/deliveries/:delivery_id/redeliver',
      summary:
        'send a FAILED or dead-lettered (DEAD) delivery again now, with a fresh attempt budget',
      tags,
      access: { roles: ADMIN },
      params: deliveryParams,
      response: deliverySchema,
      status: 202,
    },
    async ({ params, principal, request }) => {
      const by = auditActor(principal, request);
      const now = ctx.now();
      const delivery = await ctx.store.transaction(async (tx) => {
        const outcome = await redeliverWebhookDelivery(tx, params.id, params.delivery_id, now);
        switch (outcome.kind) {
          case 'not_found':
            throw new Problem(
              404,
              'DELIVERY_NOT_FOUND',
              `webhook ${params.id} has no delivery ${params.delivery_id}`,
            );
          case 'conflict':
            throw new Problem(
              409,
              'DELIVERY_NOT_REDELIVERABLE',
              `delivery ${params.delivery_id} is ${outcome.delivery.status}; only FAILED and DEAD deliveries can be redelivered`,
              { status: outcome.delivery.status },
            );
          case 'redelivered':
            await audit(
              tx,
              by,
              'WEBHOOK_DELIVERY_REDELIVERED',
              {
                webhook_id: params.id,
                delivery_id: params.delivery_id,
                event_id: outcome.delivery.eventId,
                event_type: outcome.delivery.eventType,
              },
              now,
            );
            return outcome.delivery;
          default: {
            const never: never = outcome;
            return never;
          }
        }
      });
      return deliveryJson(delivery);
    },
  );
}
