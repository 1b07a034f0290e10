/**
 * Cloud-to-device commands (docs/architecture.md#cloud-and-edge; lifecycle in gateway/commands/store/commands/command.ts):
 *
 * - `POST /api/v1/devices/{id}/commands` — an operator creates one (typed payloads:
 *   link/commandTypes.ts); it is pushed at once if the device's socket is open on any
 *   gateway.
 * - `GET /api/v1/devices/{id}/commands` — the device itself polls: its due PENDING commands
 *   are returned and marked DELIVERED (the polling fallback of the socket). Operators list
 *   with `?status=` and change nothing.
 * - `POST /api/v1/devices/{id}/commands/{command_id}/ack` — the device reports EXECUTED or
 *   FAILED; repeating an ack is harmless (200), contradicting one is a 409.
 * - `GET /api/v1/devices/{id}/ws` — the socket (deviceSocket.ts).
 *
 * This module owns the gateway's device hub: sessions, push routing and the retry sweep
 * start with the routes and stop with the gateway.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { COMMAND_STATUSES, findClearPan } from '../../runtime/index.js';
import { listCommands } from '../commands/store/commands/listCommands.js';
import { requireDeviceOrRole } from '../auth/principal.js';
import type { GatewayContext } from '../context.js';
import { gateDeviceCommand } from '../governance/deviceCommandGate.js';
import { approvalJson, approvalSchema } from '../governance/present.js';
import { acknowledge } from '../link/acknowledge.js';
import { createCommandBody, type CreateCommand } from '../link/commandTypes.js';
import { createDeviceHub } from '../link/hub.js';
import { commandJson, commandSchema } from '../link/present.js';
import { deviceLinkSettings, type DeviceLinkOptions } from '../link/settings.js';
import { signCommandDefinition } from '../link/signDefinitions.js';
import { auditActor } from '../auditActor.js';
import { Problem } from '../problem.js';
import { HELD_RESPONSE } from '../fleet/heldReply.js';
import { route } from '../route.js';
import type { RouteModule } from '../server.js';
import { registerDeviceSocket } from './deviceSocket.js';

const READ = ['admin', 'operator', 'viewer'] as const;
const SEND = ['admin', 'operator'] as const;

const deviceParams = z.strictObject({ id: z.string().min(1).max(100) });
const ackParams = z.strictObject({ id: z.string().min(1).max(100), command_id: z.uuid() });
const listQuery = z.strictObject({
  status: z.enum(COMMAND_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
const ackBody = z.strictObject({
  status: z.enum(['EXECUTED', 'FAILED']),
  result: z.unknown().optional(),
  error: z.string().max(2000).optional(),
});
const commandsResponse = z.object({
  commands: z.array(
    commandSchema.extend({
      signature: z.string().optional().meta({
        description:
          "the cloud's Ed25519 signature (base64) of a command handed to its device: over the canonical JSON of {type: 'saffron.device-command.v1', command_id, device_id, command_type, payload, created_at, expires_at}",
      }),
    }),
  ),
});

/** The command routes and device socket, with the device link tuned by `options`. */
export function commandRoutes(options: DeviceLinkOptions = {}): RouteModule {
  return async (ctx: GatewayContext) => {
    const settings = deviceLinkSettings(options);
    const hub = createDeviceHub(ctx, settings);
    ctx.commandEvents.attachSockets(hub);
    await hub.start();
    // before the server closes, which waits for every connection: the device sockets too
    ctx.app.addHook('preClose', () => hub.close());
    const tags = ['commands'];

    route(
      ctx,
      {
        method: 'POST',
        url: '/api/v1/devices/:id/commands',
        summary:
          'send a command to a device (pushed over its socket, or picked up by polling); 202 with the approval when a policy holds it for approval',
        otherResponses: HELD_RESPONSE,
        tags,
        access: { roles: SEND },
        params: deviceParams,
        body: createCommandBody,
        response: z.union([commandSchema, approvalSchema]),
        status: 201,
        bodyLimit: 512 * 1024,
      },
      async ({ params, body, principal, request, reply }) => {
        if (findClearPan(body.payload))
          throw new Problem(
            422,
            'CARD_DATA_IN_CLEAR',
            'the payload contains what looks like a card number in clear',
          );
        const now = ctx.now();
        const actor = auditActor(principal, request);
        // versions, payload schema and authorization policies (governance/), then the
        // command in one statement — or its approval, when a policy holds it
        // a definition is signed once it passed the gate, before it is held or created
        const accepted = (command: CreateCommand): CreateCommand => ({
          ...command,
          payload: signCommandDefinition(ctx.keys, command.command_type, command.payload),
        });
        const gate = await gateDeviceCommand(
          ctx.store,
          params.id,
          body,
          actor,
          now,
          ctx.gateReads,
          accepted,
        );
        if (gate.held)
          return reply
            .code(202)
            .header('location', `/api/v1/approvals/${gate.held.approvalId}`)
            .send(approvalJson(gate.held));
        // the device's socket is here and idle: the command is created DELIVERED and pushed
        // at once (one statement fewer than a wake-up's delivery); with the other POSTs of
        // this moment, in one statement (link/commandGroups.ts)
        const deliverer = hub.idle(params.id) ? hub.actor : undefined;
        const command = await hub.groups.create({
          command: {
            commandId: randomUUID(),
            deviceId: params.id,
            commandType: body.command_type,
            payload: accepted(body).payload,
            maxRetries: body.max_retries,
            expiresAt:
              body.expires_in_seconds !== undefined
                ? new Date(now.getTime() + body.expires_in_seconds * 1000)
                : null,
            commandVersion: gate.commandVersion,
          },
          actor,
          ...(deliverer ? { deliverer } : {}),
        });
        if (!command) throw new Problem(404, 'DEVICE_NOT_FOUND', `no device ${params.id}`);
        if (command.status === 'DELIVERED') hub.pushDelivered(command);
        else hub.wake(params.id);
        return commandJson(command);
      },
    );

    route(
      ctx,
      {
        method: 'GET',
        url: '/api/v1/devices/:id/commands',
        summary: 'device: take its due commands (marked DELIVERED); operators: list them by status',
        tags,
        access: { roles: READ, devices: true },
        // taking commands changes state: its replay must be refused on every gateway at once
        replay: 'strict',
        params: deviceParams,
        query: listQuery,
        response: commandsResponse,
      },
      async ({ params, query, principal }) => {
        requireDeviceOrRole(principal, params.id, READ);
        if (principal.kind === 'device') {
          if (query.status !== undefined)
            throw new Problem(
              400,
              'STATUS_FILTER_NOT_FOR_DEVICES',
              'a device polls for its due commands; status filters are for operators',
            );
          // with the other devices' polls and sockets' deliveries of this moment
          const commands = await hub.groups.poll(params.id, query.limit);
          return { commands: commands.map((c) => hub.signer.delivered(c)) };
        }
        const commands = await listCommands(ctx.store, {
          deviceId: params.id,
          limit: query.limit,
          ...(query.status !== undefined ? { status: query.status } : {}),
        });
        return { commands: commands.map(commandJson) };
      },
    );

    route(
      ctx,
      {
        method: 'POST',
        url: '/api/v1/devices/:id/commands/:command_id/ack',
        summary: 'device: report a command EXECUTED or FAILED (idempotent)',
        tags,
        access: { roles: [], devices: true },
        params: ackParams,
        body: ackBody,
        response: commandSchema,
        bodyLimit: 64 * 1024,
      },
      async ({ params, body, principal, request }) => {
        requireDeviceOrRole(principal, params.id, []); // operators never ack
        const done = await acknowledge(
          ctx,
          hub.groups,
          {
            deviceId: params.id,
            commandId: params.command_id,
            status: body.status,
            ...(body.result !== undefined ? { result: body.result } : {}),
            ...(body.error !== undefined ? { error: body.error } : {}),
          },
          request.ip,
        );
        return commandJson(done.command);
      },
    );

    registerDeviceSocket(ctx, hub);
  };
}
