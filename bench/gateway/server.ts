/**
 * One server process of the gateway benchmark, forked by bench/gateway.ts:
 *
 *   node --expose-gc --import tsx bench/gateway/server.ts SPEC
 *
 * - `saffron`: the real control plane (createGateway) over PostgreSQL in the benchmark's
 *   schema, with the keys the parent sealed the device secrets under.
 * - `raw-ws`: a bare `ws` server on a bare HTTP server, no authentication, no session
 *   logic: it holds connections and echoes every text frame back. The baseline for memory
 *   per connection and for a frame's round trip.
 * - `challenge-ws`: the floor of a device handshake, with nothing of Saffron: a bare `ws`
 *   server on a bare HTTP server that does only the protocol's own work (gateway/link/
 *   frames.ts) — it verifies the upgrade's signature with the device's secret (derived from
 *   `benchKey` as bench/gateway/fleet.ts does) or answers 401, sends a random `challenge`,
 *   verifies the `hello`'s proof (4003 when wrong) and answers a `welcome` shaped like the
 *   gateway's. No database, no admission, no presence, no delivery, no proof deadline and no
 *   server heartbeats (the device's heartbeats are ignored, as the gateway does).
 * - `bare-fastify`: fastify with one route shaped like the device config poll that answers
 *   304 when `If-None-Match` matches a fixed ETag: the baseline of the 304 path.
 * - `durable-ws`: the floor of a durable push, with nothing of Saffron: a bare node `http`
 *   server (no fastify) whose `POST /floor/{n}` reads the small JSON body, commits one row
 *   (autocommit INSERT from a pool of `poolSize`), sends the `command` frame on the socket
 *   device n opened at `/floor/ws/{n}` (a bare `ws` upgrade, no authentication) and answers
 *   201; for the device's `ack` it commits another row before it answers `acked` — the two
 *   commits a command's round trip cannot do without (created before anyone is told,
 *   executed before the ack is confirmed), one statement each, behind the same transports as
 *   the gateway's (the operator's HTTP request, the device's WebSocket). It also holds idle
 *   device sockets on their usual paths, with `challenge-ws`'s handshake, so that it can push
 *   beside a fleet as the gateway does.
 *
 * Calls: `memory` (after full collections), `connections` (open WebSockets now),
 * `statements` (SQL statements this process has sent to PostgreSQL so far, counted at
 * `pg.Client#query`, so the pool's, the LISTEN connection's and the background work's alike),
 * `loopDelay` (since the previous `loopDelay` call, the gaps between the ticks of a 5 ms timer,
 * `monitorEventLoopDelay`: p99 and longest, in ms — about 5 while the event loop is free; a
 * stall, a collection or a long synchronous pass of X ms shows as about X + 5, and holds
 * everything in flight that long).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import { createGateway, loadKeyring } from '../../gateway/index.js';
import {
  SOCKET_PROOF_VERSION,
  verifyRequestSignature,
  verifySocketProof,
} from '../../runtime/crypto/index.js';
import { asCloud, openStore } from '../../runtime/store/index.js';
import { serveParent, settledMemory } from './child.js';
import { deviceSecretOf, socketPathOf } from './fleet.js';

/** What a server process runs. */
export type ServerSpec =
  | {
      kind: 'saffron';
      databaseUrl: string;
      schema: string;
      signingKeyPem: string;
      masterKeyHex: string;
      poolSize: number;
    }
  | { kind: 'raw-ws' }
  | { kind: 'challenge-ws'; benchKey: string }
  | { kind: 'bare-fastify'; etag: string }
  | {
      kind: 'durable-ws';
      databaseUrl: string;
      schema: string;
      poolSize: number;
      /** Also hold idle device sockets (the `challenge-ws` handshake on their usual paths). */
      benchKey: string;
    };

const HOST = '127.0.0.1';
/** Largest clock difference of an upgrade's timestamp, the gateway's default. */
const SKEW_MS = 300_000;
/** What the `challenge-ws` welcome announces: the gateway's defaults (gateway/link/settings.ts). */
const HEARTBEAT_INTERVAL_MS = 30_000;
const MAX_MESSAGE_BYTES = 64 * 1024;

/** A `challenge-ws` socket until its hello: whose it is and what it was asked. */
interface Challenged {
  deviceId: string;
  secret: string;
  challenge: string;
}

/**
 * The device of a signed upgrade of its own socket (`Authorization: Device <id>:<signature>`,
 * `X-Saffron-Timestamp` within the skew, no nonce, signed over `GET`, the path, the timestamp,
 * an empty nonce and an empty body) with its secret, or undefined.
 */
function upgradedDevice(
  request: IncomingMessage,
  benchKey: string,
): { deviceId: string; secret: string } | undefined {
  const [scheme, value = ''] = (request.headers.authorization ?? '').split(' ', 2);
  const colon = value.lastIndexOf(':');
  const timestamp = request.headers['x-saffron-timestamp'];
  const path = request.url ?? '';
  if (scheme !== 'Device' || colon < 1 || typeof timestamp !== 'string') return undefined;
  if (request.headers['x-saffron-nonce'] !== undefined) return undefined;
  if (!(Math.abs(Date.now() - Date.parse(timestamp)) <= SKEW_MS)) return undefined;
  const deviceId = value.slice(0, colon);
  if (path !== socketPathOf(deviceId)) return undefined;
  const secret = deviceSecretOf(benchKey, deviceId);
  const signed = { method: 'GET', pathWithQuery: path, timestamp, nonce: '', body: '' };
  return verifyRequestSignature(secret, signed, value.slice(colon + 1))
    ? { deviceId, secret }
    : undefined;
}

/** A bare `ws` server doing the device handshake and nothing else (`challenge-ws`). */
function challengeServer(benchKey: string) {
  const server = createServer((_request, response) => response.writeHead(404).end());
  const handshake = deviceHandshake(benchKey);
  server.on('upgrade', handshake.onUpgrade);
  return { server, wss: handshake.wss };
}

/**
 * The device protocol's handshake on a bare `ws` server, and nothing after it (the device's
 * heartbeats are ignored): an `upgrade` listener for device socket paths, and its sockets.
 */
function deviceHandshake(benchKey: string) {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 256 * 1024,
  });
  // dropped at the hello, as the gateway drops a proven session's challenge
  const challenged = new WeakMap<WebSocket, Challenged>();
  // shared listener, no closure per socket (as the gateway's sessions)
  function onMessage(this: WebSocket, data: Buffer): void {
    const asked = challenged.get(this);
    if (asked === undefined) return; // after the welcome: heartbeats only prove the device alive
    let frame: { type?: unknown; proof?: unknown } | null;
    try {
      frame = JSON.parse(data.toString('utf8')) as typeof frame;
    } catch {
      return; // the gateway answers an `error` frame; the device still has to say hello
    }
    if (frame?.type !== 'hello') return;
    challenged.delete(this);
    const { deviceId, secret, challenge } = asked;
    if (
      typeof frame.proof !== 'string' ||
      !verifySocketProof(secret, deviceId, challenge, frame.proof)
    )
      return this.close(4003, 'the hello must carry a valid proof of the challenge');
    this.send(
      JSON.stringify({
        type: 'welcome',
        session_id: randomUUID(),
        heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
        max_message_bytes: MAX_MESSAGE_BYTES,
      }),
    );
  }
  function onError(this: WebSocket): void {
    this.terminate();
  }
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const device = upgradedDevice(request, benchKey);
    if (device === undefined) {
      socket.on('error', () => socket.destroy());
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    socket.cork(); // the 101 and the challenge in one write, as the gateway does
    wss.handleUpgrade(request, socket, head, (ws) => {
      const challenge = randomBytes(32).toString('base64url');
      challenged.set(ws, { ...device, challenge });
      ws.on('message', onMessage);
      ws.on('error', onError);
      ws.send(JSON.stringify({ type: 'challenge', challenge, version: SOCKET_PROOF_VERSION }));
      socket.uncork();
    });
  };
  return { onUpgrade, wss };
}

/** Count every statement any pg client of this process sends (bench instrumentation only). */
function countStatements(): () => number {
  let count = 0;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    count++;
    return query.apply(this, args);
  };
  return () => count;
}
const statements = countStatements();
/** The event loop's lateness is sampled this often (ms). */
const LOOP_DELAY_RESOLUTION_MS = 5;

async function start(spec: ServerSpec): Promise<{ url: string; connections: () => number }> {
  switch (spec.kind) {
    case 'saffron': {
      const store = asCloud(
        await openStore(spec.databaseUrl, {
          postgres: {
            schema: spec.schema,
            maxConnections: spec.poolSize,
            applicationName: 'bench-gateway',
          },
        }),
      );
      const keys = loadKeyring(mkdtempSync(join(tmpdir(), 'saffron-bench-keys-')), {
        SAFFRON_SIGNING_KEY: spec.signingKeyPem,
        SAFFRON_MASTER_KEY: spec.masterKeyHex,
      });
      const gateway = await createGateway({ store, keys });
      const url = await gateway.listen(0, HOST);
      return { url, connections: () => gateway.app.websocketServer.clients.size };
    }
    case 'raw-ws': {
      const server = createServer((_request, response) => response.writeHead(404).end());
      const wss = new WebSocketServer({ server });
      wss.on('connection', (socket) =>
        socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })),
      );
      await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return { url: `http://${HOST}:${port}`, connections: () => wss.clients.size };
    }
    case 'challenge-ws': {
      const { server, wss } = challengeServer(spec.benchKey);
      await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return { url: `http://${HOST}:${port}`, connections: () => wss.clients.size };
    }
    case 'durable-ws': {
      const pool = new pg.Pool({
        connectionString: spec.databaseUrl,
        max: spec.poolSize,
        options: `-c search_path=${spec.schema}`,
      });
      await pool.query(
        'CREATE TABLE IF NOT EXISTS bench_push_floor (id bigserial PRIMARY KEY, seq int, kind text, at timestamptz DEFAULT now())',
      );
      const commit = (seq: number, kind: string) =>
        pool.query('INSERT INTO bench_push_floor (seq, kind) VALUES ($1, $2)', [seq, kind]);
      // the device sockets by device number
      const devices = new Map<string, WebSocket>();
      const server = createServer((request, response) => {
        const n = /^\/floor\/(\d+)$/.exec(request.url ?? '')?.[1];
        if (request.method !== 'POST' || n === undefined) return void response.writeHead(404).end();
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const { seq } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { seq: number };
          void commit(seq, 'post').then(
            () => {
              devices.get(n)?.send(JSON.stringify({ type: 'command', seq }));
              response
                .writeHead(201, { 'content-type': 'application/json' })
                .end(JSON.stringify({ seq }));
            },
            () => response.writeHead(500).end(),
          );
        });
      });
      const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
      const idle = deviceHandshake(spec.benchKey);
      server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        const n = /^\/floor\/ws\/(\d+)$/.exec(request.url ?? '')?.[1];
        if (n === undefined) return idle.onUpgrade(request, socket, head);
        wss.handleUpgrade(request, socket, head, (ws) => {
          devices.set(n, ws);
          ws.on('close', () => {
            if (devices.get(n) === ws) devices.delete(n);
          });
          ws.on('message', (data: Buffer) => {
            const { seq } = JSON.parse(data.toString('utf8')) as { seq: number };
            void commit(seq, 'ack').then(
              () => ws.send(JSON.stringify({ type: 'acked', seq })),
              (error: unknown) => ws.close(1011, String(error).slice(0, 100)),
            );
          });
        });
      });
      await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return {
        url: `http://${HOST}:${port}`,
        connections: () => wss.clients.size + idle.wss.clients.size,
      };
    }
    case 'bare-fastify': {
      const app = Fastify({ logger: false });
      app.get('/api/v1/devices/:device_id/config', async (request, reply) => {
        reply.header('etag', spec.etag).header('cache-control', 'private, no-cache');
        if (request.headers['if-none-match'] === spec.etag) return reply.code(304).send();
        return { device_id: (request.params as { device_id: string }).device_id, config: {} };
      });
      const url = await app.listen({ port: 0, host: HOST });
      return { url, connections: () => 0 };
    }
  }
}

/** The gaps between the event loop's timer ticks since the last `loopDelay` call (ms). */
function loopDelays(): () => { p99Ms: number; maxMs: number } {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  return () => {
    const read = { p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 };
    histogram.reset();
    return read;
  };
}
const loopDelay = loopDelays();

const spec = JSON.parse(process.argv[2] ?? '') as ServerSpec;
const started = start(spec);
serveParent(
  started.then(({ url }) => ({ url })),
  {
    memory: () => settledMemory(),
    connections: async () => (await started).connections(),
    statements: () => Promise.resolve(statements()),
    loopDelay: () => Promise.resolve(loopDelay()),
  },
);
