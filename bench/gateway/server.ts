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
 * - `bare-fastify`: fastify with one route shaped like the device config poll that answers
 *   304 when `If-None-Match` matches a fixed ETag: the baseline of the 304 path.
 * - `durable-ws`: the floor of a durable push, with nothing of Saffron: a bare `ws` server
 *   that, for a `post` frame, commits one row (autocommit INSERT from a pool of `poolSize`)
 *   before it sends the `command` frame, and for the device's `ack` commits another before
 *   it answers `acked` — the two commits a command's round trip cannot do without (created
 *   before anyone is told, executed before the ack is confirmed), one statement each.
 *
 * Calls: `memory` (after full collections), `connections` (open WebSockets now),
 * `statements` (SQL statements this process has sent to PostgreSQL so far, counted at
 * `pg.Client#query`, so the pool's, the LISTEN connection's and the background work's alike).
 */
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { WebSocketServer } from 'ws';
import { createGateway, loadKeyring } from '../../gateway/index.js';
import { asCloud, openStore } from '../../runtime/store/index.js';
import { serveParent, settledMemory } from './child.js';

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
  | { kind: 'bare-fastify'; etag: string }
  | { kind: 'durable-ws'; databaseUrl: string; schema: string; poolSize: number };

const HOST = '127.0.0.1';

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
      const server = createServer((_request, response) => response.writeHead(404).end());
      const wss = new WebSocketServer({ server, perMessageDeflate: false });
      wss.on('connection', (socket) =>
        socket.on('message', (data: Buffer) => {
          const frame = JSON.parse(data.toString('utf8')) as { type: string; seq: number };
          const answer = frame.type === 'post' ? 'command' : 'acked';
          void commit(frame.seq, frame.type).then(
            () => socket.send(JSON.stringify({ type: answer, seq: frame.seq })),
            (error: unknown) => socket.close(1011, String(error).slice(0, 100)),
          );
        }),
      );
      await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return { url: `http://${HOST}:${port}`, connections: () => wss.clients.size };
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

const spec = JSON.parse(process.argv[2] ?? '') as ServerSpec;
const started = start(spec);
serveParent(
  started.then(({ url }) => ({ url })),
  {
    memory: () => settledMemory(),
    connections: async () => (await started).connections(),
    statements: () => Promise.resolve(statements()),
  },
);
