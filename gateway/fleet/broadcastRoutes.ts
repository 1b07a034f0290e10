/**
 * Command broadcasts (`/api/v1/command-broadcasts`): one command to every device matching
 * a filter, rolled out in phases with an automatic halt on failures (actors/broadcast).
 * Operators and admins create, pause, resume and cancel; viewers read the progress and the
 * per-device outcomes. Creating one starts phase 1 before the answer — unless a policy holds
 * its command for approval: then nothing is created but the approval (202; the broadcast is
 * created and started, with the id the approval reserved, once enough approvers agree).
 *
 * Pause stops further phases (commands already created still go); a threshold halt also
 * cancels the phase's undelivered commands; resume continues — after a threshold halt it
 * overrides the threshold for that phase, which is the operator's call to make.
 */
import { z } from 'zod';
import { bcEvents, type BroadcastStatus } from '../../actors/index.js';
import { isTerminalBroadcastStatus } from './broadcastHost.js';
import { BROADCAST_STATUSES, COMMAND_STATUSES } from '../../runtime/index.js';
import { getBroadcast } from './store/broadcasts/getBroadcast.js';
import { listBroadcastDevices } from './store/broadcasts/listBroadcastDevices.js';
import { listBroadcasts } from './store/broadcasts/listBroadcasts.js';
import { auditActor } from '../auditActor.js';
import type { GatewayContext } from '../context.js';
import { approvalSchema } from '../governance/present.js';
import { Problem } from '../problem.js';
import { route } from '../route.js';
import { createBroadcast } from './create.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { FleetDriver } from './driver.js';
import { HELD_RESPONSE, HELD_SUMMARY, replyHeld } from './heldReply.js';
import {
  broadcastDeviceJson,
  broadcastDeviceSchema,
  broadcastJson,
  broadcastSchema,
} from './present.js';
import { createBroadcastBody } from './schemas.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const MANAGE = ['admin', 'operator'] as const;
const tags = ['command broadcasts'];

const idParams = z.strictObject({ id: z.uuid() });
const listQuery = z.strictObject({
  status: z.enum(BROADCAST_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});
const devicesQuery = z.strictObject({
  status: z.enum(COMMAND_STATUSES).optional(),
  phase: z.coerce.number().int().min(1).max(10).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().min(1).max(100).optional(),
});

const notFound = (id: string) =>
  new Problem(404, 'BROADCAST_NOT_FOUND', `no command broadcast ${id}`);

/** Which statuses each operator action applies to, and the 409 otherwise. */
const ACTIONS = {
  pause: {
    from: ['IN_PROGRESS', 'WAITING_NEXT_PHASE'],
    code: 'BROADCAST_NOT_RUNNING',
    event: bcEvents.pause,
    summary: 'pause a broadcast: no further phase starts until it is resumed',
  },
  resume: {
    from: ['HALTED'],
    code: 'BROADCAST_NOT_HALTED',
    event: bcEvents.resume,
    summary: 'resume a paused or halted broadcast (overrides a threshold halt for that phase)',
  },
  cancel: {
    from: ['PENDING', 'IN_PROGRESS', 'WAITING_NEXT_PHASE', 'HALTED'],
    code: 'BROADCAST_FINISHED',
    event: bcEvents.cancel,
    summary: 'cancel a broadcast: undelivered commands are CANCELLED, no further phase starts',
  },
} as const satisfies Record<
  string,
  { from: readonly BroadcastStatus[]; code: string; event: unknown; summary: string }
>;

/** Register the broadcast routes on `ctx`, driven by `driver`. */
export function registerBroadcastRoutes(ctx: GatewayContext, driver: FleetDriver): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/command-broadcasts',
      summary: `broadcast a command to every device matching a filter, in phases; ${HELD_SUMMARY}`,
      otherResponses: HELD_RESPONSE,
      tags,
      access: { roles: MANAGE },
      body: createBroadcastBody,
      response: z.union([broadcastSchema, approvalSchema]),
      status: 201,
      bodyLimit: 1024 * 1024,
    },
    async ({ body, principal, request, reply }) => {
      const by = auditActor(principal, request);
      const created = await ctx.store.transaction((tx) =>
        createBroadcast(
          tx,
          {
            command: body.command,
            target: body.target,
            rollout: body.rollout,
            failureThreshold: body.failure_threshold ?? null,
          },
          by,
          ctx.now(),
          { keys: ctx.keys },
        ),
      );
      if (created.kind === 'held') return replyHeld(reply, created.approval);
      const id = created.broadcast.broadcastId;
      const step = await driver.stepBroadcast(id, bcEvents.start(ctx.now(), 0), by);
      if (!step) throw notFound(id);
      return broadcastJson(step.broadcast);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-broadcasts',
      summary: 'list broadcasts, newest first, with their progress',
      tags,
      access: { roles: READ },
      query: listQuery,
      response: z.object({
        broadcasts: z.array(broadcastSchema),
        next_cursor: z.string().nullable(),
      }),
    },
    async ({ query }) => {
      const before = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
      const broadcasts = await listBroadcasts(ctx.store, {
        limit: query.limit,
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(before ? { before: { createdAt: before.createdAt, broadcastId: before.id } } : {}),
      });
      const last = broadcasts.at(-1);
      return {
        broadcasts: broadcasts.map(broadcastJson),
        next_cursor:
          last && broadcasts.length === query.limit
            ? encodeCursor(last.createdAt, last.broadcastId)
            : null,
      };
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-broadcasts/:id',
      summary: 'a broadcast: status, phases with their counts, totals',
      tags,
      access: { roles: READ },
      params: idParams,
      response: broadcastSchema,
    },
    async ({ params }) => {
      const broadcast = await getBroadcast(ctx.store, params.id);
      if (!broadcast) throw notFound(params.id);
      return broadcastJson(broadcast);
    },
  );

  route(
    ctx,
    {
      method: 'GET',
      url: '/api/v1/command-broadcasts/:id/devices',
      summary: "a broadcast's per-device outcomes, by device id (filter by status, phase)",
      tags,
      access: { roles: READ },
      params: idParams,
      query: devicesQuery,
      response: z.object({
        devices: z.array(broadcastDeviceSchema),
        next_after: z.string().nullable(),
      }),
    },
    async ({ params, query }) => {
      if (!(await getBroadcast(ctx.store, params.id))) throw notFound(params.id);
      const devices = await listBroadcastDevices(ctx.store, params.id, {
        limit: query.limit,
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(query.phase !== undefined ? { phase: query.phase } : {}),
        ...(query.after !== undefined ? { after: query.after } : {}),
      });
      const last = devices.at(-1);
      return {
        devices: devices.map(broadcastDeviceJson),
        next_after: last && devices.length === query.limit ? last.deviceId : null,
      };
    },
  );

  for (const [action, spec] of Object.entries(ACTIONS)) {
    route(
      ctx,
      {
        method: 'POST',
        url: `/api/v1/command-broadcasts/:id/${action}`,
        summary: spec.summary,
        tags,
        access: { roles: MANAGE },
        params: idParams,
        response: broadcastSchema,
      },
      async ({ params, principal, request }) => {
        const step = await driver.stepBroadcast(
          params.id,
          spec.event(ctx.now()),
          auditActor(principal, request),
        );
        if (!step) throw notFound(params.id);
        if (!(spec.from as readonly string[]).includes(step.previousStatus))
          throw new Problem(
            409,
            spec.code,
            `broadcast ${params.id} is ${step.previousStatus}${isTerminalBroadcastStatus(step.previousStatus) ? ' (finished)' : ''}; cannot ${action} it`,
            { status: step.previousStatus },
          );
        return broadcastJson(step.broadcast);
      },
    );
  }
}
