/**
 * bench fleet: one broadcast to a fleet of registered devices — 10,000 by default, half of
 * them connected over WebSocket from a second process — through the whole control plane:
 * `POST /api/v1/command-broadcasts` (device selection, one command and one audit row per
 * device, in one statement), the push to every connected device over its socket (each a
 * DELIVERED transaction), each device's ack (a transaction each), and the broadcast's
 * progress catching up through the fleet driver (acks coalesced into few steps).
 *
 * - `metrics.broadcast_10k_seconds`: from sending the POST until the broadcast itself (GET)
 *   reports every connected device's ack; the offline half stays PENDING, as it would.
 * - `metrics.per_device_ack_p99_ms`: per connected device, from sending the POST until the
 *   gateway confirmed its ack (`acked` frame) — the 99th percentile.
 * - `baselines.raw_fanout_seconds` / `raw_per_device_ack_p99_ms`: a bare `ws` server in this
 *   process sends the same command frames to the same number of sockets from the same
 *   client process and confirms each ack, with no database, no auth and no audit — the
 *   floor set by the sockets alone. `ratios.broadcast_vs_raw_fanout` divides the two.
 *
 * Runs against PostgreSQL (DATABASE_URL, default postgres://root@127.0.0.1:5432/test) in a
 * fresh schema, dropped afterwards. Devices are registered in bulk through the store.
 *
 *   npm run bench -- fleet [--json] [--scale X] [--devices 10000] [--connected 5000]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import { createApiToken, createGateway, ephemeralKeyring } from '../gateway/index.js';
import { commandRoutes } from '../gateway/routes/commands.js';
import { fleetRoutes } from '../gateway/fleet/module.js';
import { migrations } from '../migrations/index.js';
import { asCloud, migrate, openStore } from '../runtime/store/index.js';
import { percentile, round, type BenchOptions, type BenchResult } from './harness.js';
import { deviceIdOf, deviceSecretOf } from './fleet/identity.js';

const DEVICES = fileURLToPath(new URL('./fleet/devices.ts', import.meta.url));
const IN_FLIGHT = 32;
const POOL = 16;

interface DeviceProcess {
  call<T>(kind: string, args?: Record<string, unknown>): Promise<T>;
  kill(): void;
}

function startDevices(): Promise<DeviceProcess> {
  const child: ChildProcess = fork(DEVICES, [], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const error = new Error(`device process exited (${code})`);
      reject(error);
      for (const p of pending.values()) p.reject(error);
    });
    child.on('message', (m: { id: number; ok: boolean; value?: unknown; error?: string }) => {
      if (m.id === 0)
        return resolve({
          call: <T>(kind: string, args: Record<string, unknown> = {}) =>
            new Promise<T>((res, rej) => {
              const id = nextId++;
              pending.set(id, { resolve: res, reject: rej });
              child.send({ id, kind, ...args });
            }),
          kill: () => void child.kill(),
        });
      const waiting = pending.get(m.id);
      pending.delete(m.id);
      if (m.ok) waiting?.resolve(m.value);
      else waiting?.reject(new Error(m.error));
    });
  });
}

/** The raw baseline: the same frames over bare sockets, no control plane behind them. */
async function rawServer(frame: (i: number) => string) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise((resolve) => wss.once('listening', resolve));
  const clients: WebSocket[] = [];
  wss.on('connection', (ws) => {
    clients.push(ws);
    ws.on('message', (data: Buffer) => {
      const ack = JSON.parse(data.toString('utf8')) as { command_id: string; status: string };
      ws.send(
        JSON.stringify({
          type: 'acked',
          command_id: ack.command_id,
          status: ack.status,
          repeated: false,
        }),
      );
    });
  });
  const { port } = wss.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    fanOut: () => clients.forEach((ws, i) => ws.send(frame(i))),
    close: () => new Promise<void>((resolve) => wss.close(() => resolve())),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Run the fleet benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const { progress, flags } = options;
  const total = Math.max(10, Math.round(Number(flags.devices ?? 10_000) * options.scale));
  const connected = Math.min(
    total,
    Math.max(5, Math.round(Number(flags.connected ?? 5_000) * options.scale)),
  );
  const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const schema = `bench_fleet_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = asCloud(await openStore(url, { postgres: { schema, maxConnections: POOL } }));
  const notes: string[] = [];
  let devices: DeviceProcess | undefined;
  try {
    await migrate(store, migrations);
    const keys = ephemeralKeyring();
    const benchKey = randomBytes(32).toString('base64url');
    progress(`registering ${total} devices`);
    for (let i = 0; i < total; i += 1000) {
      const rows = [];
      for (let n = i; n < Math.min(total, i + 1000); n++) {
        const deviceId = deviceIdOf(n);
        rows.push({
          device_id: deviceId,
          device_type: 'POS',
          secret_ciphertext: keys.seal(deviceSecretOf(benchKey, deviceId)),
        });
      }
      await store.cloud.insertInto('edge_devices').values(rows).execute();
    }
    const gateway = await createGateway({
      store,
      keys,
      routes: [commandRoutes(), fleetRoutes()],
    });
    const base = await gateway.listen(0);
    const operator = (await createApiToken(store, { name: 'bench', role: 'operator' })).token;
    devices = await startDevices();
    progress(`connecting ${connected} devices over WebSocket (second process)`);
    const opened = await devices.call<{ opened: number; seconds: number }>('open', {
      url: base,
      key: benchKey,
      count: connected,
      inFlight: IN_FLIGHT,
    });
    progress(`  ${opened.opened} connected in ${opened.seconds.toFixed(1)} s`);

    progress('broadcasting');
    const collecting = devices.call<{ commandAt: number[]; ackedAt: number[] }>('collect', {
      expected: connected,
    });
    const t0 = Date.now();
    const res = await fetch(`${base}/api/v1/command-broadcasts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${operator}` },
      body: JSON.stringify({
        command: {
          command_type: 'DIAGNOSTIC',
          payload: { checks: ['disk', 'printer'], upload_logs: false },
          expires_in_seconds: 3600,
        },
        target: { device_type: 'POS' },
      }),
    });
    const createdMs = Date.now() - t0;
    if (res.status !== 201) throw new Error(`broadcast refused: ${res.status} ${await res.text()}`);
    const { broadcast_id: id } = (await res.json()) as { broadcast_id: string };
    const times = await collecting;
    const allAckedMs = Date.now() - t0;
    let status: { succeeded_count: number; total_devices: number; status: string };
    for (;;) {
      const r = await fetch(`${base}/api/v1/command-broadcasts/${id}`, {
        headers: { authorization: `Bearer ${operator}` },
      });
      status = (await r.json()) as typeof status;
      if (status.succeeded_count >= connected) break;
      await sleep(10);
    }
    const broadcastSeconds = (Date.now() - t0) / 1000;
    const acks = times.ackedAt.map((t) => t - t0).sort((a, b) => a - b);
    const deliveries = times.commandAt.map((t) => t - t0).sort((a, b) => a - b);
    notes.push(
      `broadcast ${status.status}: ${status.succeeded_count} acked of ${status.total_devices} targeted (${total - connected} offline stay PENDING); POST answered in ${createdMs} ms; last ack confirmed at ${allAckedMs} ms`,
    );
    await devices.call('close');
    await gateway.close();

    progress('baseline: the same frames over bare ws');
    const sample = JSON.stringify({
      type: 'command',
      command: {
        command_id: '00000000-0000-4000-8000-000000000000',
        device_id: deviceIdOf(0),
        command_type: 'DIAGNOSTIC',
        payload: { checks: ['disk', 'printer'], upload_logs: false },
        status: 'DELIVERED',
        retry_count: 0,
        max_retries: 3,
        created_by: 'bench',
        created_at: new Date().toISOString(),
        delivered_at: new Date().toISOString(),
        next_attempt_at: null,
        expires_at: new Date().toISOString(),
        executed_at: null,
        result: null,
        error: null,
      },
    });
    const raw = await rawServer((i) =>
      sample.replace(
        '00000000-0000-4000-8000-000000000000',
        `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      ),
    );
    await devices.call('openRaw', { url: raw.url, count: connected, inFlight: IN_FLIGHT });
    const rawCollecting = devices.call<{ commandAt: number[]; ackedAt: number[] }>('collect', {
      expected: connected,
    });
    const r0 = Date.now();
    raw.fanOut();
    const rawTimes = await rawCollecting;
    const rawSeconds = (Date.now() - r0) / 1000;
    const rawAcks = rawTimes.ackedAt.map((t) => t - r0).sort((a, b) => a - b);
    await devices.call('close');
    await raw.close();

    return {
      bench: 'fleet',
      metrics: {
        broadcast_10k_seconds: round(broadcastSeconds),
        per_device_ack_p99_ms: round(percentile(acks, 99)),
        per_device_ack_p50_ms: round(percentile(acks, 50)),
        per_device_delivery_p99_ms: round(percentile(deliveries, 99)),
        broadcast_create_ms: createdMs,
        devices_registered: total,
        devices_connected: connected,
      },
      baselines: {
        raw_fanout_seconds: round(rawSeconds),
        raw_per_device_ack_p99_ms: round(percentile(rawAcks, 99)),
      },
      ratios: {
        broadcast_vs_raw_fanout: round(broadcastSeconds / rawSeconds),
        per_device_p99_vs_raw: round(percentile(acks, 99) / Math.max(1, percentile(rawAcks, 99))),
      },
      notes,
    };
  } finally {
    devices?.kill();
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
