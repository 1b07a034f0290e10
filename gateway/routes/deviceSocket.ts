/**
 * `GET /api/v1/devices/{id}/ws`: the device's WebSocket (protocol: link/frames.ts). The
 * upgrade request is signed like any device request but without a nonce — the device signs
 * `GET \n /api/v1/devices/{id}/ws \n timestamp \n (empty) \n sha256("")` — and checked
 * before the upgrade happens: bad or missing credentials are a 401 and another device's
 * socket a 403, as problem+json on the HTTP response, and no socket is opened. A plain GET
 * is a 426. The signature only turns strangers away cheaply, writing nothing: freshness is
 * proven on the socket, whose first frame is a challenge the device must answer.
 *
 * Deprecated, for one release: an upgrade with `X-Saffron-Nonce` is checked the old way —
 * its nonce recorded in the shared table before the upgrade is answered — and its socket is
 * not challenged.
 *
 * Admission: a gateway carries at most `maxPendingHandshakes` handshakes at once (link/
 * settings.ts) — authentication, the upgrade and the socket's proof; the connect itself is
 * written behind (link/presence.ts) and holds no slot. Beyond that an upgrade is a 503
 * GATEWAY_BUSY with a `Retry-After` that spreads the refused over the coming seconds at the
 * rate the gateway completes handshakes (link/admission.ts). Refusing costs no database work, so a reconnect storm waits on the devices
 * instead of piling connections the gateway cannot authenticate in time (which time out,
 * reconnect and pile more).
 *
 * The upgrade of a challenged socket is corked from its admission until its session has
 * written the challenge, so the `101` and the first frame leave in one write: one system call
 * and one wake-up of the device fewer per handshake. A request that fails on the way there
 * is answered with `end()` or destroyed, and either releases the cork.
 *
 * Memory: @fastify/websocket leaves each socket holding its upgrade request — the
 * placeholder HTTP response stays attached to the TCP socket, and the socket's error
 * listener closes over fastify's request and reply — about 3 KB per idle connection
 * (measured: 18.1 → 14.9 KB of heap per session). Once the session is open, the response
 * is detached and that listener replaced by one shared listener that does what it did
 * (log the error, terminate the socket).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { authenticate } from '../auth/authenticate.js';
import type { GatewayContext } from '../context.js';
import type { DeviceHub } from '../link/hub.js';
import { Problem } from '../problem.js';
import { Counter } from 'prom-client';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Register the device socket route on `hub`. */
export function registerDeviceSocket(ctx: GatewayContext, hub: DeviceHub): void {
  const url = '/api/v1/devices/:id/ws';
  const devices = new WeakMap<
    FastifyRequest,
    { deviceId: string; release: () => void; challenge: boolean; response: ServerResponse }
  >();
  const log = ctx.app.log;
  function onSocketError(this: WebSocket, error: Error) {
    log.error({ err: error }, 'device socket error');
    this.terminate();
  }
  const refused = new Counter({
    name: 'saffron_device_handshakes_refused_total',
    help: 'device socket upgrades answered 503 because too many handshakes were in progress',
    registers: [ctx.metrics],
  });
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
      const release = request.ws ? hub.admit() : () => undefined;
      if (!release) {
        refused.inc();
        const retryAfter = hub.retryAfterSeconds();
        throw new Problem(
          503,
          'GATEWAY_BUSY',
          `too many devices are connecting at once; retry in ${retryAfter} s`,
          {},
          { 'retry-after': String(retryAfter) },
        );
      }
      try {
        const nonce = header(request, 'x-saffron-nonce');
        const principal = await authenticate(ctx.auth, {
          authorization: request.headers.authorization,
          timestamp: header(request, 'x-saffron-timestamp'),
          nonce,
          method: request.method,
          pathWithQuery: request.url,
          body: '',
          replay: nonce === undefined ? 'challenge' : 'strict',
        });
        const { id } = request.params as { id: string };
        // an upgrade is a request like any other: rate-limit rules count it (reconnect storms)
        await ctx.rateLimits.enforce(principal, request, reply);
        if (principal.kind !== 'device' || principal.deviceId !== id)
          throw new Problem(403, 'FORBIDDEN', 'only the device itself may open its socket');
        devices.set(request, {
          deviceId: id,
          release,
          challenge: nonce === undefined,
          response: reply.raw,
        });
        // the 101 and the challenge leave in one write (uncorked once the session is open)
        if (nonce === undefined) request.raw.socket.cork();
      } catch (error) {
        release();
        throw error;
      }
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
      const admitted = devices.get(request);
      if (admitted === undefined) return socket.terminate(); // unreachable: preValidation ran
      const leftovers = socket.listeners('error') as ((error: Error) => void)[];
      try {
        // the TCP socket, whose address the session reads when an ack needs it
        const peer = request.raw.socket;
        hub.accept(socket, admitted.deviceId, peer, admitted.release, admitted.challenge);
      } finally {
        request.raw.socket.uncork();
      }
      // let the upgrade's request and reply go (see the module comment)
      admitted.response.detachSocket(request.raw.socket);
      for (const listener of leftovers) socket.removeListener('error', listener);
      socket.on('error', onSocketError);
    },
  });
}
