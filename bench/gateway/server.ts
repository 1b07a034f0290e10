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
 * - `durable-handshake`: the handshake floor plus the database work of a device's first
 *   handshake with a gateway that reads each device's row as it arrives (the gateway reads
 *   its devices ahead as it starts), and nothing else of Saffron: before the
 *   signature is checked, the device's row is read from the benchmark's schema — its sealed
 *   secrets and whether commands wait for it, as a resume needs (an unknown device is a 401;
 *   the secret checked is still the derived one: opening the sealed one, an AES-GCM of 32
 *   bytes, is left out) — with the reads that arrive together in one statement, one in flight
 *   at a time; and once proven, the device is recorded ONLINE with its `last_seen` (OFFLINE
 *   when its socket ends), written behind every 250 ms for all devices since, in one
 *   statement. The gateway's own batching, without its actor snapshots, webhook events,
 *   admission, rate limits or delivery.
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
 *   device sockets on their usual paths, with `challenge-ws`'s handshake and then the
 *   protocol's heartbeats (the gateway's cadence: each socket visited once per 30 s by a
 *   shared timer wheel, sent a `heartbeat` when quiet for half of that, dropped after three
 *   silent intervals), so that it can push beside a fleet as the gateway does. With
 *   `audited`, the command rows floor: the same server, whose two commits are the gateway's
 *   own statements for one command — its creation, DELIVERED with its audit rows and the
 *   device row share-locked, and its ack, EXECUTED with its audit row — instead of a bare row.
 *   With `grouped` as well, the grouped rows floor: those statements go through the gateway's
 *   group commit, as the gateway's own do, so what arrives together is written together.
 *
 * Calls: `memory` (after full collections), `connections` (open WebSockets now),
 * `statements` (SQL statements this process has sent to PostgreSQL so far, counted at
 * `pg.Client#query`, so the pool's, the LISTEN connection's and the background work's alike),
 * `loopDelay` (since the previous `loopDelay` call, the gaps between the ticks of a 5 ms timer,
 * `monitorEventLoopDelay`: p99 and longest, in ms — about 5 while the event loop is free; a
 * stall, a collection or a long synchronous pass of X ms shows as about X + 5, and holds
 * everything in flight that long).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import { createGateway, loadKeyring } from '../../gateway/index.js';
import { ackCommands } from '../../gateway/commands/store/commands/ackCommands.js';
import type { CommandActor } from '../../gateway/commands/store/commands/command.js';
import { insertCommands } from '../../gateway/commands/store/commands/insertCommand.js';
import { type CommandGroups, createCommandGroups } from '../../gateway/link/commandGroups.js';
import { createTickWheel } from '../../gateway/link/tickWheel.js';
import {
  newSocketChallenge,
  SOCKET_PROOF_VERSION,
  verifyRequestSignature,
  verifySocketProof,
} from '../../runtime/crypto/index.js';
import { asCloud, openStore } from '../../runtime/store/index.js';
import { serveParent, settledMemory } from './child.js';
import { deviceIdOf, deviceSecretOf, socketPathOf } from './fleet.js';

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
  | {
      kind: 'durable-handshake';
      databaseUrl: string;
      schema: string;
      poolSize: number;
      benchKey: string;
    }
  | { kind: 'bare-fastify'; etag: string }
  | {
      kind: 'durable-ws';
      databaseUrl: string;
      schema: string;
      poolSize: number;
      /** Also hold idle device sockets (the `challenge-ws` handshake on their usual paths). */
      benchKey: string;
      /** Commit the command's own rows with the gateway's statements, not one bare row each. */
      audited?: boolean;
      /** With `audited`: through the gateway's group commit, not one statement per command. */
      grouped?: boolean;
    };

const HOST = '127.0.0.1';
/** Largest clock difference of an upgrade's timestamp, the gateway's default. */
const SKEW_MS = 300_000;
/** What the `challenge-ws` welcome announces: the gateway's defaults (gateway/link/settings.ts). */
const HEARTBEAT_INTERVAL_MS = 30_000;
const MAX_MESSAGE_BYTES = 64 * 1024;
/** Intervals without a frame from a device before its socket is dropped (the gateway's default). */
const MISSED_HEARTBEATS = 3;

/** A `challenge-ws` socket until its hello: whose it is and what it was asked. */
interface Challenged {
  deviceId: string;
  secret: string;
  challenge: string;
}

/** A signed upgrade of a device's own socket, its signature not yet checked. */
interface SignedUpgrade {
  deviceId: string;
  path: string;
  timestamp: string;
  signature: string;
}

/**
 * The parts of a signed upgrade of a device's own socket (`Authorization: Device
 * <id>:<signature>`, `X-Saffron-Timestamp` within the skew, no nonce), or undefined.
 */
function signedUpgrade(request: IncomingMessage): SignedUpgrade | undefined {
  const [scheme, value = ''] = (request.headers.authorization ?? '').split(' ', 2);
  const colon = value.lastIndexOf(':');
  const timestamp = request.headers['x-saffron-timestamp'];
  const path = request.url ?? '';
  if (scheme !== 'Device' || colon < 1 || typeof timestamp !== 'string') return undefined;
  if (request.headers['x-saffron-nonce'] !== undefined) return undefined;
  if (!(Math.abs(Date.now() - Date.parse(timestamp)) <= SKEW_MS)) return undefined;
  const deviceId = value.slice(0, colon);
  if (path !== socketPathOf(deviceId)) return undefined;
  return { deviceId, path, timestamp, signature: value.slice(colon + 1) };
}

/** Whether `upgrade` is signed with `secret` (over `GET`, the path, the timestamp, an empty nonce and body). */
const signedWith = (upgrade: SignedUpgrade, secret: string): boolean =>
  verifyRequestSignature(
    secret,
    {
      method: 'GET',
      pathWithQuery: upgrade.path,
      timestamp: upgrade.timestamp,
      nonce: '',
      body: '',
    },
    upgrade.signature,
  );

/**
 * What the durable handshake floor adds to the handshake: the device's row read before its
 * signature is checked (`known`), and its connect and disconnect recorded (written behind).
 */
interface DeviceRows {
  known(deviceId: string): Promise<boolean>;
  connected(deviceId: string): void;
  disconnected(deviceId: string): void;
}

/**
 * A bare `ws` server doing the device handshake and nothing else (`challenge-ws`), or with
 * `rows`, the handshake and the device's rows (`durable-handshake`).
 */
function challengeServer(benchKey: string, rows?: DeviceRows) {
  const server = createServer((_request, response) => response.writeHead(404).end());
  const handshake = deviceHandshake(benchKey, rows);
  server.on('upgrade', handshake.onUpgrade);
  return { server, wss: handshake.wss };
}

/**
 * The device protocol's handshake on a bare `ws` server, and nothing after it (the device's
 * heartbeats are not read): an `upgrade` listener for device socket paths, and its sockets.
 * With `rows`, an upgrade waits for the device's row before its signature is checked (an
 * unknown device is a 401), and a proven socket's connect and end are recorded. With
 * `heartbeats`, the proven sockets also carry the protocol's liveness traffic (see
 * {@link heartbeatWheel}).
 */
function deviceHandshake(benchKey: string, rows?: DeviceRows, heartbeats = false) {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 256 * 1024,
  });
  // dropped at the hello, as the gateway drops a proven session's challenge
  const challenged = new WeakMap<WebSocket, Challenged>();
  // the device of each proven socket, when its rows are kept
  const proven = new WeakMap<WebSocket, string>();
  const liveness = heartbeats ? heartbeatWheel() : undefined;
  function onClose(this: WebSocket): void {
    liveness?.delete(this);
    const deviceId = proven.get(this);
    if (deviceId !== undefined) rows?.disconnected(deviceId);
  }
  // shared listener, no closure per socket (as the gateway's sessions)
  function onMessage(this: WebSocket, data: Buffer): void {
    const asked = challenged.get(this);
    // after the welcome: heartbeats only prove the device alive
    if (asked === undefined) return liveness?.heard(this);
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
    if (rows) {
      proven.set(this, deviceId);
      rows.connected(deviceId);
    }
    this.send(
      JSON.stringify({
        type: 'welcome',
        session_id: randomUUID(),
        heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
        max_message_bytes: MAX_MESSAGE_BYTES,
      }),
    );
    liveness?.add(this);
  }
  function onError(this: WebSocket): void {
    this.terminate();
  }
  const refuse = (socket: Duplex) => {
    socket.on('error', destroyOnError);
    socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  };
  const accept = (
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    upgrade: SignedUpgrade,
  ) => {
    const secret = deviceSecretOf(benchKey, upgrade.deviceId);
    if (!signedWith(upgrade, secret)) return refuse(socket);
    socket.cork(); // the 101 and the challenge in one write, as the gateway does
    wss.handleUpgrade(request, socket, head, (ws) => {
      const challenge = newSocketChallenge();
      challenged.set(ws, { deviceId: upgrade.deviceId, secret, challenge });
      ws.on('message', onMessage);
      ws.on('error', onError);
      if (rows || liveness) ws.on('close', onClose);
      ws.send(JSON.stringify({ type: 'challenge', challenge, version: SOCKET_PROOF_VERSION }));
      socket.uncork();
    });
  };
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const upgrade = signedUpgrade(request);
    if (upgrade === undefined) return refuse(socket);
    if (!rows) return accept(request, socket, head, upgrade);
    socket.on('error', destroyOnError); // while its row is read
    rows.known(upgrade.deviceId).then(
      (known) => (known ? accept(request, socket, head, upgrade) : refuse(socket)),
      () => socket.destroy(),
    );
  };
  return { onUpgrade, wss };
}

/** When a socket of {@link heartbeatWheel} last wrote and was last heard from (ms). */
interface Liveness {
  writtenAt: number;
  heardAt: number;
}

/**
 * The device protocol's liveness traffic on a set of idle sockets, as the gateway's device
 * hub does it (gateway/link/hub.ts, session.ts) and nothing else: each socket is visited
 * once per heartbeat interval by a shared timer wheel; one not heard from for
 * {@link MISSED_HEARTBEATS} intervals is dropped, one written to no more recently than half
 * an interval ago is sent a `heartbeat` frame (which the device answers with one). A held
 * fleet of N idle devices so carries about N / 30 s frames each way, as a gateway's does.
 */
function heartbeatWheel() {
  const state = new WeakMap<WebSocket, Liveness>();
  const frame = JSON.stringify({ type: 'heartbeat' });
  const wheel = createTickWheel<WebSocket>(HEARTBEAT_INTERVAL_MS, (sockets) => {
    const now = performance.now();
    for (const socket of sockets) {
      const live = state.get(socket)!;
      if (now - live.heardAt > MISSED_HEARTBEATS * HEARTBEAT_INTERVAL_MS) socket.terminate();
      else if (now - live.writtenAt >= HEARTBEAT_INTERVAL_MS / 2) {
        live.writtenAt = now;
        socket.send(frame);
      }
    }
  });
  wheel.start();
  return {
    add(socket: WebSocket) {
      const now = performance.now();
      state.set(socket, { writtenAt: now, heardAt: now });
      wheel.add(socket);
    },
    heard(socket: WebSocket) {
      const live = state.get(socket);
      if (live) live.heardAt = performance.now();
    },
    delete(socket: WebSocket) {
      wheel.delete(socket);
    },
  };
}

function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** Most devices one read or one write of {@link deviceRows} carries. */
const ROWS_BATCH = 500;
/** How long a read that finds none in flight waits for others (the gateway's, for its credentials). */
const READ_GATHER_MS = 2;
/** How often connects and disconnects are written (the gateway's presence flush). */
const PRESENCE_FLUSH_MS = 250;

/**
 * The database work of a device's first handshake with a gateway that reads each device's
 * row as it arrives, done as cheaply as it can be: the device's row read (its sealed secrets and whether commands
 * wait for it; reads arriving together share one statement, one read in flight at a time),
 * and its status and `last_seen` written behind, every device connected or gone since the
 * last flush in one statement.
 */
function deviceRows(pool: pg.Pool): DeviceRows {
  let waiting: { deviceId: string; done: (known: boolean, error?: Error) => void }[] = [];
  let reading = false;
  const read = async () => {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, ROWS_BATCH);
      waiting = waiting.slice(ROWS_BATCH);
      try {
        const { rows } = await pool.query<{ device_id: string }>({
          name: 'floor-device-rows',
          text: `SELECT d.device_id, d.secret_ciphertext, d.previous_secret_ciphertext,
              d.previous_secret_expires_at,
              EXISTS (SELECT 1 FROM device_commands AS c
                WHERE c.device_id = d.device_id AND c.status IN ('PENDING', 'DELIVERED')) AS open
            FROM edge_devices AS d
            WHERE d.device_id = ANY ($1::text[])`,
          values: [batch.map((w) => w.deviceId)],
        });
        const found = new Set(rows.map((r) => r.device_id));
        for (const w of batch) w.done(found.has(w.deviceId));
      } catch (error) {
        for (const w of batch) w.done(false, error as Error);
      }
    }
    reading = false;
  };
  const statuses = new Map<string, 'ONLINE' | 'OFFLINE'>();
  let writing = Promise.resolve();
  const flush = () => {
    if (statuses.size === 0) return;
    const values = [...statuses].map(([device_id, status]) => ({ device_id, status }));
    statuses.clear();
    // one flush at a time; a failed one is reported and the next goes on
    writing = writing
      .then(async () => {
        for (let i = 0; i < values.length; i += ROWS_BATCH)
          await pool.query({
            name: 'floor-device-status',
            text: `UPDATE edge_devices AS d SET status = v.status, last_seen = now()
              FROM jsonb_to_recordset($1::jsonb) AS v(device_id text, status text)
              WHERE d.device_id = v.device_id`,
            values: [JSON.stringify(values.slice(i, i + ROWS_BATCH))],
          });
      })
      .catch((error: unknown) =>
        console.error('durable handshake floor: status write failed', error),
      );
  };
  setInterval(flush, PRESENCE_FLUSH_MS);
  return {
    known: (deviceId) =>
      new Promise<boolean>((resolve, reject) => {
        waiting.push({
          deviceId,
          done: (known, error) => (error ? reject(error) : resolve(known)),
        });
        if (reading) return;
        reading = true;
        setTimeout(() => void read(), READ_GATHER_MS);
      }),
    connected: (deviceId) => void statuses.set(deviceId, 'ONLINE'),
    disconnected: (deviceId) => void statuses.set(deviceId, 'OFFLINE'),
  };
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

/** Listen on a free port of the loopback address; the server's URL. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return `http://${HOST}:${port}`;
}

/** A pool on the benchmark's schema, of `poolSize` connections. */
const schemaPool = (spec: { databaseUrl: string; schema: string; poolSize: number }) =>
  new pg.Pool({
    connectionString: spec.databaseUrl,
    max: spec.poolSize,
    options: `-c search_path=${spec.schema}`,
  });

/** A cloud store over the benchmark's schema, its pool as large as the spec says. */
const schemaStore = async (
  spec: { databaseUrl: string; schema: string; poolSize: number },
  applicationName: string,
) =>
  asCloud(
    await openStore(spec.databaseUrl, {
      postgres: { schema: spec.schema, maxConnections: spec.poolSize, applicationName },
    }),
  );

/** The two commits of the durable push floor, for command `seq` of device number `n`. */
interface FloorCommits {
  /** Before the command is pushed: it exists. */
  created(n: string, seq: number): Promise<unknown>;
  /** Before the ack is answered: it was executed. */
  executed(n: string, seq: number): Promise<unknown>;
}

type FloorSpec = Extract<ServerSpec, { kind: 'durable-ws' }>;

/** One bare row per commit, autocommitted from a pool: the least a durable commit costs. */
async function bareRows(spec: FloorSpec): Promise<FloorCommits> {
  const pool = schemaPool(spec);
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_push_floor (id bigserial PRIMARY KEY, seq int, kind text, at timestamptz DEFAULT now())',
  );
  const commit = (seq: number, kind: string) =>
    pool.query('INSERT INTO bench_push_floor (seq, kind) VALUES ($1, $2)', [seq, kind]);
  return {
    created: (_n, seq) => commit(seq, 'post'),
    executed: (_n, seq) => commit(seq, 'ack'),
  };
}

/**
 * The command's own rows, written by the gateway's statements (one creation, one ack, each a
 * group of one; with `grouped`, through the gateway's group commit, gateway/link/
 * commandGroups.ts, with the creations and acks of other devices): the device row
 * share-locked, the command created DELIVERED with its COMMAND_CREATED and COMMAND_DELIVERED
 * audit rows; then updated EXECUTED with its audit row — what the guarantees write for a
 * push, with none of the gateway's other work around it.
 */
async function commandRows(spec: FloorSpec): Promise<FloorCommits> {
  const store = await schemaStore(spec, spec.grouped ? 'bench-grouped-rows' : 'bench-command-rows');
  const operator: CommandActor = { actor: 'admin', role: 'admin', sourceIp: HOST };
  const gateway: CommandActor = { actor: 'gateway:floor', role: 'system' };
  const write: Pick<CommandGroups, 'create' | 'ack'> = spec.grouped
    ? createCommandGroups(store, gateway, 'floor', () => new Date())
    : {
        create: async (creation) =>
          (await insertCommands(store, [creation], 'floor', new Date()))[0],
        ack: async (request) => (await ackCommands(store, [request]))[0]!,
      };
  // the command each push created, by its sequence number, until it is acked
  const open = new Map<number, string>();
  return {
    created: async (n, seq) => {
      const commandId = randomUUID();
      const deviceId = deviceIdOf(Number(n));
      const command = await write.create({
        command: {
          commandId,
          deviceId,
          commandType: 'UPDATE_CONFIG',
          payload: { reason: `bench ${seq}` },
          maxRetries: 3,
          expiresAt: null,
        },
        actor: operator,
        deliverer: gateway,
      });
      if (!command) throw new Error(`no device ${deviceId}`);
      open.set(seq, commandId);
    },
    executed: async (n, seq) => {
      const commandId = open.get(seq);
      if (commandId === undefined) throw new Error(`no command ${seq} open`);
      open.delete(seq);
      const deviceId = deviceIdOf(Number(n));
      const outcome = await write.ack({
        ack: { deviceId, commandId, status: 'EXECUTED' },
        actor: { actor: deviceId, role: 'device', sourceIp: HOST },
        now: new Date(),
      });
      if (outcome.kind !== 'acked') throw new Error(`command ${seq}: ${outcome.kind}`);
    },
  };
}

async function start(
  spec: ServerSpec,
): Promise<{ url: string; connections: () => number | Promise<number> }> {
  switch (spec.kind) {
    case 'saffron': {
      const store = await schemaStore(spec, 'bench-gateway');
      const keys = loadKeyring(mkdtempSync(join(tmpdir(), 'saffron-bench-keys-')), {
        SAFFRON_SIGNING_KEY: spec.signingKeyPem,
        SAFFRON_MASTER_KEY: spec.masterKeyHex,
      });
      const gateway = await createGateway({ store, keys });
      const url = await gateway.listen(0, HOST);
      // the device sessions it holds, as its gauge reports them
      const sessions = gateway.context.metrics.getSingleMetric('saffron_device_sessions');
      const connections = async () => (await sessions!.get()).values[0]?.value ?? 0;
      return { url, connections };
    }
    case 'raw-ws': {
      const server = createServer((_request, response) => response.writeHead(404).end());
      const wss = new WebSocketServer({ server });
      wss.on('connection', (socket) =>
        socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })),
      );
      return { url: await listen(server), connections: () => wss.clients.size };
    }
    case 'challenge-ws': {
      const { server, wss } = challengeServer(spec.benchKey);
      return { url: await listen(server), connections: () => wss.clients.size };
    }
    case 'durable-handshake': {
      const pool = schemaPool(spec);
      const { server, wss } = challengeServer(spec.benchKey, deviceRows(pool));
      return { url: await listen(server), connections: () => wss.clients.size };
    }
    case 'durable-ws': {
      const commits = spec.audited ? await commandRows(spec) : await bareRows(spec);
      // the device sockets by device number
      const devices = new Map<string, WebSocket>();
      const server = createServer((request, response) => {
        const n = /^\/floor\/(\d+)$/.exec(request.url ?? '')?.[1];
        if (request.method !== 'POST' || n === undefined) return void response.writeHead(404).end();
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const { seq } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { seq: number };
          void commits.created(n, seq).then(
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
      // idle keep-alive connections live as long as the gateway's (72 s), not node's 5 s, so
      // the operator's agent does not meet a connection the server is closing
      server.keepAliveTimeout = 72_000;
      const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
      const idle = deviceHandshake(spec.benchKey, undefined, true);
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
            void commits.executed(n, seq).then(
              () => ws.send(JSON.stringify({ type: 'acked', seq })),
              (error: unknown) => ws.close(1011, String(error).slice(0, 100)),
            );
          });
        });
      });
      return {
        url: await listen(server),
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
