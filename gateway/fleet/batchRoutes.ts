/**
 * Command batches (`/api/v1/command-batches`): many commands to one or many devices, run
 * in PARALLEL or SEQUENTIALLY per device (actors/batch). Operators and admins create and
 * cancel; viewers read. Creating one starts it at once: the first commands are created and
 * pushed before the answer — unless a policy holds its commands for approval: then nothing
 * is created but the approval (202; the batch is created and started, with the id the
 * approval reserved, once enough approvers agree). Cancelling stops what was not delivered yet (CANCELLED, and
 * never-released items too); commands devices already hold run their course.
 */
import { z } from 'zod';
import { batchEvents, restoreBatchSnapshot, BATCH_ITEM_STATUSES } from '../../actors/index.js';
import { isTerminalBatchStatus } from './batchHost.js';
import { BATCH_STATUSES } from '../../runtime/index.js';
import { getBatch } from './store/batches/getBatch.js';
import { listBatches } from './store/batches/listBatches.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { approvalSchema } from '../governance/present.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { createBatch } from './create.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { FleetDriver } from './driver.js';
import { HELD_RESPONSE, HELD_SUMMARY, replyHeld } from './heldReply.js';
import { batchItemJson, batchItemSchema, batchJson, batchSchema } from './present.js';
import { createBatchBody } from './schemas.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;
const tags = ['command batches'];

const idParams = z.strictObject({ id: z.uuid() });
const listQuery = z.strictObject({
  status: z.enum(BATCH_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});
const itemsQuery = z.strictObject({
  status: z.enum(BATCH_ITEM_STATUSES).optional(),
  device_id: z.string().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

const notFound = (id: string) => new Problem(404, 'BATCH_NOT_FOUND', `no command batch ${id}`);

/** Register the batch routes on `ctx`, driven by `driver`. */
export function registerBatchRoutes(ctx: GatewayContext, driver: FleetDriver): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-batches',
      summary: `create a command batch (PARALLEL or SEQUENTIAL per device) and start it; ${HELD_SUMMARY}`,
      otherResponses: HELD_RESPONSE,
      tags,
      access: { roles: MANAGE },
      body: createBatchBody,
      response: z.union([batchSchema, approvalSchema]),
      status: 201,
      bodyLimit: 1024 * 1024,
    },
    async ({ body, principal, request, reply }) => {
      const by = auditActor(principal, request);
      const created = await ctx.store.transaction((tx) =>
        createBatch(
          tx,
          {
            name: body.name ?? null,
            mode: body.execution_mode,
            stopOnFailure: body.stop_on_failure,
            deviceIds: body.device_ids,
            commands: body.commands,
          },
          by,
          ctx.now(),
          { keys: ctx.keys },
        ),
      );
      if (created.kind === 'held') return replyHeld(reply, created.approval);
      const step = await driver.stepBatch(created.batch.batchId, batchEvents.start(), by);
      if (!step) throw notFound(created.batch.batchId);
      return batchJson(step.batch, step.snapshot);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-batches',
      summary: 'list command batches, newest first, with their progress',
      tags,
      access: { roles: READ },
      query: listQuery,
      response: z.object({ batches: z.array(batchSchema), next_cursor: z.string().nullable() }),
    },
    async ({ query }) => {
      const before = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
      const batches = await listBatches(ctx.store, {
        limit: query.limit,
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(before ? { before: { createdAt: before.createdAt, batchId: before.id } } : {}),
      });
      const last = batches.at(-1);
      return {
        batches: batches.map((b) => batchJson(b)),
        next_cursor:
          last && batches.length === query.limit
            ? encodeCursor(last.createdAt, last.batchId)
            : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-batches/:id',
      summary: 'a command batch with its progress (commands by status)',
      tags,
      access: { roles: READ },
      params: idParams,
      response: batchSchema,
    },
    async ({ params }) => {
      const batch = await getBatch(ctx.store, params.id);
      if (!batch) throw notFound(params.id);
      return batchJson(batch);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-batches/:id/items',
      summary: "a batch's (device, command) items and their statuses",
      tags,
      access: { roles: READ },
      params: idParams,
      query: itemsQuery,
      response: z.object({ items: z.array(batchItemSchema), total: z.number().int() }),
    },
    async ({ params, query }) => {
      const batch = await getBatch(ctx.store, params.id);
      if (!batch) throw notFound(params.id);
      const items = restoreBatchSnapshot(batch.actorSnapshot, batch.batchId).context.items.filter(
        (i) =>
          (query.status === undefined || i.status === query.status) &&
          (query.device_id === undefined || i.deviceId === query.device_id),
      );
      return {
        items: items.slice(query.offset, query.offset + query.limit).map(batchItemJson),
        total: items.length,
      };
    },
  );

  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-batches/:id/cancel',
      summary: 'cancel a batch: undelivered commands are CANCELLED, unsent ones never go',
      tags,
      access: { roles: MANAGE },
      params: idParams,
      response: batchSchema,
    },
    async ({ params, principal, request }) => {
      const step = await driver.stepBatch(
        params.id,
        batchEvents.cancel(),
        auditActor(principal, request),
      );
      if (!step) throw notFound(params.id);
      if (isTerminalBatchStatus(step.previousStatus))
        throw new Problem(
          409,
          'BATCH_FINISHED',
          `batch ${params.id} already finished ${step.previousStatus}`,
          { status: step.previousStatus },
        );
      return batchJson(step.batch, step.snapshot);
    },
  );
}
