/**
 * The platform's floor under an offline payment: what a payment costs on this machine with no
 * engine at all. A bare node:http server answers each POST of the POS after the two things a
 * payment cannot do without — the fraud rules' call on the WASM thread (the runtime's own
 * runner, the same guest and input) and one durable SQLite commit of as many WAL pages as a
 * payment writes (`pages`: one row appended to each of that many tables, WAL,
 * `synchronous=FULL`, the agent's checkpoint backstop). The POS child and its loopback hop are
 * the agent's. Its p99 is a tail no engine can go below here: what is left above it is the
 * engine's own (workflow, steps, SAF record, local API).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createWasmRunner, mapWasmSource, sha256Hex } from '../../runtime/index.js';

/** WAL pages one offline approval of pos_payment writes (docs/reference/schema.md). */
export const PAYMENT_WAL_PAGES = 31;
/** How long the server keeps an idle keep-alive connection (see `startFloor`). */
const IDLE_KEEP_ALIVE_MS = 120_000;
/** The agent's `wal_autocheckpoint` backstop (edge/agent/walCheckpoints.ts). */
const BACKSTOP_PAGES = 10_000;

/** A running floor server. */
export interface Floor {
  url: string;
  close(): Promise<void>;
}

/** Start the floor server on loopback, its database in `dir`, the guest `bytes`. */
export async function startFloor(
  dir: string,
  bytes: Uint8Array,
  token: string,
  pages = PAYMENT_WAL_PAGES,
): Promise<Floor> {
  const db = new Database(join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const inserts = Array.from({ length: pages }, (_, i) => {
    db.exec(`CREATE TABLE f${i} (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`);
    return db.prepare(`INSERT INTO f${i} (v) VALUES (?)`);
  });
  const commit = db.transaction((row: string) => {
    for (const insert of inserts) insert.run(row);
  });
  const hash = sha256Hex(bytes);
  const runner = createWasmRunner({ source: mapWasmSource(new Map([[hash, bytes]])) });
  const expected = Buffer.from(`Bearer ${token}`);
  const authorized = (header: string | undefined) => {
    const given = Buffer.from(header ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (!authorized(req.headers.authorization)) {
          res.writeHead(401).end();
          return;
        }
        const { data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          data: { amount_minor: number };
        };
        const fraud = await runner.run({
          hash,
          input: { amount_minor: data.amount_minor, attempts_last_hour: 0 },
          timeoutMs: 1000,
        });
        if (!fraud.ok) throw fraud.error;
        const body = JSON.stringify({
          status: 'COMPLETED',
          state: { ...data, fraud: fraud.output, decision: { status: 'APPROVED' } },
        });
        commit(body);
        res.writeHead(201, { 'content-type': 'application/json' }).end(body);
      })().catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
  });
  // the POS's keep-alive connection waits idle while the agent is measured between rounds: the
  // default 5 s would close it under a request the POS is sending (as fastify's 72 s does not)
  server.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runner.close();
      db.close();
    },
  };
}
