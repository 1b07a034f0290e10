/**
 * `GET /api/v1/devices/{id}/ws`: the device's WebSocket (protocol: link/frames.ts). The
 * upgrade request is authenticated like any device request — the device signs
 * `GET \n /api/v1/devices/{id}/ws \n timestamp \n nonce \n sha256("")` — before the
 * upgrade happens: bad or missing credentials are a 401 and another device's socket a 403,
 * as problem+json on the HTTP response, and no socket is opened. A plain GET is a 426.
 */
import type { FastifyRequest } from 'fastify';
import { authenticate } from '../auth/authenticate.js';
import type { GatewayContext } from '../context.js';
import type { DeviceHub } from '../link/hub.js';
import { Problem } from '../problem.js';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Register the device socket route on `hub`. */
export function registerDeviceSocket(ctx: GatewayContext, hub: DeviceHub): void {
  const url = '/api/v1/devices/:id/ws';
  const devices = new WeakMap<FastifyRequest, string>();
  ctx.openapi.add({
    method: 'GET',
    url,
    summary: 'the device WebSocket: command push, acks, heartbeats (signed upgrade; 101)',
    tags: ['devices'],
    security: 'user-or-device',
    successStatus: 101,
  });
  ctx.app.route({
    method: 'GET',
    url,
    preValidation: async (request, reply) => {
      const principal = await authenticate(ctx.auth, {
        authorization: request.headers.authorization,
        timestamp: header(request, 'x-saffron-timestamp'),
        nonce: header(request, 'x-saffron-nonce'),
        method: request.method,
        pathWithQuery: request.url,
        body: '',
      });
      const { id } = request.params as { id: string };
      // an upgrade is a request like any other: rate-limit rules count it (reconnect storms)
      await ctx.rateLimits.enforce(principal, request, reply);
      if (principal.kind !== 'device' || principal.deviceId !== id)
        throw new Problem(403, 'FORBIDDEN', 'only the device itself may open its socket');
      devices.set(request, id);
    },
    handler: () => {
      throw new Problem(
        426,
        'UPGRADE_REQUIRED',
        'this endpoint is a WebSocket',
        {},
        { upgrade: 'websocket' },
      );
    },
    wsHandler: (socket, request) => {
      const deviceId = devices.get(request);
      if (deviceId === undefined) return socket.terminate(); // unreachable: preValidation ran
      hub.accept(socket, deviceId, request.ip);
    },
  });
}
