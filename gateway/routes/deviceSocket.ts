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
 * rate the gateway completes handshakes (link/admission.ts). Refusing costs no database
 * work, so a reconnect storm waits on the devices instead of piling connections the gateway
 * cannot authenticate in time (which time out, reconnect and pile more).
 *
 * Routing: upgrades are taken from the HTTP server's `upgrade` event, not through fastify. A
 * reconnecting fleet is almost all upgrades, and fastify's routing and hooks, the request and
 * placeholder reply it builds for each, and the garbage they leave were a tenth of the
 * gateway's CPU per handshake. So this module matches the path, authenticates, applies
 * admission and the rate-limit rules (their `ratelimit-*` headers ride on the `101`), and
 * writes a refusal as a problem+json response itself. Any other upgrade is a 404; a GET
 * without an upgrade goes through fastify like every request (the 426).
 *
 * The upgrade of a challenged socket is corked until its session has written the challenge,
 * so the `101` and the first frame leave in one write: one system call and one wake-up of the
 * device fewer per handshake.
 *
 * Memory: nothing of the upgrade's request stays with the socket — the session keeps the TCP
 * socket itself (for the address its acks' audit rows name) and the `ws` socket on it.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Counter } from 'prom-client';
import { WebSocketServer, type WebSocket } from 'ws';
import { authenticate } from '../auth/authenticate.js';
import type { GatewayContext } from '../context.js';
import type { DeviceHub } from '../link/hub.js';
import { Problem, problemBody, toProblem } from '../problem.js';
import { MAX_PATH_PARAMETER_LENGTH } from '../route.js';

const ROUTE = '/api/v1/devices/:id/ws';
/** The device socket's path and its device id; a query may follow. */
const PATH = /^\/api\/v1\/devices\/([^/?]+)\/ws(?:\?|$)/;
/**
 * Largest frame the transport takes. A session closes on frames above its own, smaller cap
 * (link/settings.ts `maxInboundBytes`) with a reason; beyond this one `ws` cuts the socket.
 */
const MAX_PAYLOAD_BYTES = 256 * 1024;

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * End the socket: once a refusal is written, and on an error before `ws` takes the socket
 * over (a connection reset during authentication).
 */
function destroySocket(this: Socket): void {
  this.destroy();
}

/** Answer an upgrade with `problem` and close the connection once the answer is written. */
function refuse(socket: Socket, problem: Problem): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(
    problemBody(problem.status, problem.code, problem.message, problem.extensions),
  );
  const lines = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}`,
    'content-type: application/problem+json',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...Object.entries(problem.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.once('finish', destroySocket);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** The path's device id; a problem when the id is too long or not valid percent-encoding. */
function deviceIdOf(encoded: string): string {
  if (encoded.length > MAX_PATH_PARAMETER_LENGTH)
    throw new Problem(
      414,
      'PATH_PARAMETER_TOO_LONG',
      `a path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters`,
    );
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new Problem(400, 'BAD_URL', 'the URL is not valid percent-encoded UTF-8');
  }
}

/** Register the device socket route on `hub`. */
export function registerDeviceSocket(ctx: GatewayContext, hub: DeviceHub): void {
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
  const sockets = new WebSocketServer({
    noServer: true,
    clientTracking: false, // the hub holds the sessions
    maxPayload: MAX_PAYLOAD_BYTES,
  });
  // the rate-limit headers of an upgrade, added to its 101
  const limitHeaders = new WeakMap<IncomingMessage, string[]>();
  sockets.on('headers', (headers: string[], request: IncomingMessage) => {
    const extra = limitHeaders.get(request);
    if (extra) headers.push(...extra);
  });

  ctx.openapi.add({
    method: 'GET',
    url: ROUTE,
    summary: 'the device WebSocket: command push, acks, heartbeats (signed upgrade; 101)',
    tags: ['devices'],
    security: 'user-or-device',
    successStatus: 101,
  });
  ctx.app.get(ROUTE, () => {
    throw new Problem(
      426,
      'UPGRADE_REQUIRED',
      'this endpoint is a WebSocket',
      {},
      { upgrade: 'websocket' },
    );
  });

  /** Check the upgrade; on success `socket` is the device's WebSocket, served by the hub. */
  const upgrade = async (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = request.url ?? '/';
    const match = PATH.exec(url);
    if (!match) throw new Problem(404, 'NOT_FOUND', `no WebSocket at ${url.split('?')[0]}`);
    const id = deviceIdOf(match[1]!);
    const release = hub.admit();
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
    let accepted = false;
    try {
      const nonce = header(request, 'x-saffron-nonce');
      const principal = await authenticate(ctx.auth, {
        authorization: request.headers.authorization,
        timestamp: header(request, 'x-saffron-timestamp'),
        nonce,
        method: request.method ?? 'GET',
        pathWithQuery: url,
        body: '',
        replay: nonce === undefined ? 'challenge' : 'strict',
      });
      // an upgrade is a request like any other: rate-limit rules count it (reconnect storms)
      const routed = { method: request.method ?? 'GET', url, routeOptions: { url: ROUTE } };
      await ctx.rateLimits.enforce(principal, routed, {
        header: (name: string, value: string) => {
          const extra = limitHeaders.get(request);
          if (extra) extra.push(`${name}: ${value}`);
          else limitHeaders.set(request, [`${name}: ${value}`]);
        },
      });
      if (principal.kind !== 'device' || principal.deviceId !== id)
        throw new Problem(403, 'FORBIDDEN', 'only the device itself may open its socket');
      const challenge = nonce === undefined;
      socket.removeListener('error', destroySocket);
      // the 101 and the challenge leave in one write (uncorked once the session is open)
      if (challenge) socket.cork();
      // ws answers a malformed upgrade itself (400, 405) and then never calls back
      sockets.handleUpgrade(request, socket, head, (ws) => {
        accepted = true;
        try {
          hub.accept(ws, id, socket, release, challenge);
        } finally {
          socket.uncork();
        }
        ws.on('error', onSocketError);
      });
    } finally {
      if (!accepted) release();
    }
  };

  ctx.app.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', destroySocket);
    upgrade(request, socket, head).catch((error: unknown) => {
      const problem = toProblem(error);
      if (!problem) log.error({ err: error }, 'device socket upgrade failed');
      refuse(
        socket,
        problem ?? new Problem(500, 'INTERNAL', 'the server could not complete the request'),
      );
    });
  });
}
