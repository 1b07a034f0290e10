/**
 * Command templates (`/api/v1/command-templates`): named, versioned command sets with typed
 * variables (templates.ts). Saving under an existing name adds a version; versions are
 * immutable. Applying one renders it with the given variables (422 with paths when they do
 * not fit) and creates a SEQUENTIAL batch for one device, a batch, or a broadcast — or, when
 * a policy holds its commands for approval, only the approval (202, as for a batch or a
 * broadcast created directly).
 */
import { z } from 'zod';
import { batchEvents, bcEvents } from '../../actors/index.js';
import { findClearPan } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { getTemplate } from './store/templates/getTemplate.js';
import { insertTemplate } from './store/templates/insertTemplate.js';
import { listTemplates } from './store/templates/listTemplates.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { approvalSchema } from '../governance/present.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { applyTemplate, appliedIds } from './create.js';
import type { FleetDriver } from './driver.js';
import { HELD_RESPONSE, HELD_SUMMARY, replyHeld } from './heldReply.js';
import {
  batchJson,
  batchSchema,
  broadcastJson,
  broadcastSchema,
  templateJson,
  templateSchema,
} from './present.js';
import { applyTemplateBody, createTemplateBody } from './schemas.js';
import { checkTemplate } from './templates.js';
import { randomUUID } from 'node:crypto';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;
const tags = ['command templates'];

const idParams = z.strictObject({ id: z.uuid() });
const listQuery = z.strictObject({
  name: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
const appliedSchema = z.union([
  z.object({ kind: z.literal('batch'), batch: batchSchema }),
  z.object({ kind: z.literal('broadcast'), broadcast: broadcastSchema }),
]);

const notFound = (id: string) =>
  new Problem(404, 'TEMPLATE_NOT_FOUND', `no command template ${id}`);

/** Register the template routes on `ctx`; applications are started by `driver`. */
export function registerTemplateRoutes(ctx: GatewayContext, driver: FleetDriver): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-templates',
      summary:
        'save a command template (a new name is version 1, an existing one the next version)',
      tags,
      access: { roles: MANAGE },
      body: createTemplateBody,
      response: templateSchema,
      status: 201,
      bodyLimit: 512 * 1024,
    },
    async ({ body, principal, request }) => {
      const issues = checkTemplate(body);
      if (issues.length > 0)
        throw new Problem(
          422,
          'TEMPLATE_INVALID',
          `invalid template: ${issues
            .slice(0, 5)
            .map((i) => `${i.path}: ${i.message}`)
            .join('; ')}`,
          { errors: issues.slice(0, 50) },
        );
      if (findClearPan({ commands: body.commands, variables: body.variables }))
        throw new Problem(
          422,
          'CARD_DATA_IN_CLEAR',
          'the template contains what looks like a card number in clear',
        );
      const template = await ctx.store.transaction((tx) =>
        insertTemplate(
          tx,
          {
            templateId: randomUUID(),
            name: body.name,
            description: body.description ?? null,
            commands: body.commands,
            variables: body.variables,
          },
          auditActor(principal, request),
          ctx.now(),
        ),
      );
      return templateJson(template);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-templates',
      summary: 'list templates: the latest version of each, or every version of ?name=',
      tags,
      access: { roles: READ },
      query: listQuery,
      response: z.object({ templates: z.array(templateSchema) }),
    },
    async ({ query }) => ({
      templates: (
        await listTemplates(ctx.store, {
          limit: query.limit,
          ...(query.name !== undefined ? { name: query.name } : {}),
        })
      ).map(templateJson),
    }),
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-templates/:id',
      summary: 'a template version',
      tags,
      access: { roles: READ },
      params: idParams,
      response: templateSchema,
    },
    async ({ params }) => {
      const template = await getTemplate(ctx.store, params.id);
      if (!template) throw notFound(params.id);
      return templateJson(template);
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-templates/:id/apply',
      summary: `render a template with variables and send it to a device, a batch or a filter; ${HELD_SUMMARY}`,
      otherResponses: HELD_RESPONSE,
      tags,
      access: { roles: MANAGE },
      params: idParams,
      body: applyTemplateBody,
      response: z.union([appliedSchema, approvalSchema]),
      status: 201,
      bodyLimit: 1024 * 1024,
    },
    async ({ params, body, principal, request, reply }) => {
      const by = auditActor(principal, request);
      const now = ctx.now();
      const applied = await ctx.store.transaction(async (tx) => {
        const template = await getTemplate(tx, params.id);
        if (!template) throw notFound(params.id);
        const created = await applyTemplate(tx, template, body.variables, body.target, by, now, {
          keys: ctx.keys,
        });
        const { approvalId, ...ids } = appliedIds(created);
        await appendCommandAudit(
          tx,
          by,
          [
            {
              event: 'TEMPLATE_APPLIED',
              ...ids,
              details: {
                template_id: template.templateId,
                name: template.name,
                version: template.version,
                target: body.target.kind,
                variables: Object.keys(body.variables),
                ...(approvalId !== undefined ? { held: true, approval_id: approvalId } : {}),
              },
            },
          ],
          now,
        );
        return created;
      });
      if (applied.kind === 'held') return replyHeld(reply, applied.approval);
      if (applied.kind === 'batch') {
        const step = await driver.stepBatch(applied.batch.batchId, batchEvents.start(), by);
        return { kind: 'batch', batch: batchJson(step?.batch ?? applied.batch, step?.snapshot) };
      }
      const step = await driver.stepBroadcast(
        applied.broadcast.broadcastId,
        bcEvents.start(ctx.now(), 0),
        by,
      );
      return { kind: 'broadcast', broadcast: broadcastJson(step?.broadcast ?? applied.broadcast) };
    },
  );
}
