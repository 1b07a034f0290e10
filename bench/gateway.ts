/**
 * bench gateway: the cloud control plane under the loads a fleet puts on it, each against a
 * baseline measured in the same run on the same machine.
 *
 * - Idle device connections held by one gateway process (signed upgrade + hello each) and
 *   the resident memory each costs, against the same number of connections to a bare `ws`
 *   server. The server runs in a child process of its own and the clients in others, a few
 *   thousand per process, so that one process's descriptor limit (≈ 20,000 here; the count
 *   is capped below it) is spent on the connections measured.
 * - Command push round trip at a paced 1,000 commands/s (open loop): operator POST → push
 *   over the device's socket → device ack → the server's `acked` frame, and the delivery part
 *   alone; against a raw `ws` echo of a frame of the same size at the same rate, and against
 *   the durable floor: the same round trip over the same transports (the operator's HTTP
 *   POST to a bare node `http` server, the device's WebSocket) through a server that only
 *   commits one row before the push and one before the ack's answer. When the gateway
 *   cannot keep up, the round trip includes the queue that builds (it is not hidden
 *   by slowing the load), and `push_commands_completed_per_s` shows the rate it did reach.
 *   The push is measured twice: with the idle connections closed (the series the goal is
 *   judged on) and once more while the gateway still holds them (`push_fleet_held_*`), as a
 *   gateway in service does — its heartbeats, presence writes and larger heap beside the push.
 *   The durable floor is measured the same way too: once alone, once while it holds as many
 *   idle device sockets (with the handshake floor's handshake, then only the protocol's
 *   heartbeats), after the same hold; over each hold, the CPU the held fleet costs.
 * - SAF records accepted per second, signed, in batches of 500 through
 *   `POST /api/v1/transactions/batch`, against raw PostgreSQL inserting equivalent rows in
 *   multi-row INSERTs of 500 (goal: ≥ 0.30 of the raw rate).
 * - Config polls per second on the 304 path (device-signed, `If-None-Match`), against a bare
 *   fastify route answering 304 on an ETag match, with the same client.
 * - The gaps in the server's event loop (a 5 ms timer's ticks) while it holds the idle
 *   connections for one heartbeat interval, and while it pushes, against the bare servers
 *   doing the same.
 * - Handshakes per second while the idle connections open, against the same clients
 *   connecting to the bare `ws` server and to the handshake floor: a bare `ws` server that
 *   does only the protocol's work (verify the signed upgrade, challenge, verify the hello's
 *   proof, welcome) and nothing of Saffron; and to the durable handshake floor: the same
 *   server plus the database work of a device's first handshake with a gateway that reads
 *   each device's row as it arrives — the row read before its signature is checked, its
 *   ONLINE status and `last_seen` written behind — batched as the gateway batches them (the
 *   gateway reads its devices ahead as it starts, so it skips most of those reads); connects
 *   and 304 polls
 *   with two gateway processes on the same database.
 * - Then the handshakes and the 304 polls again, in rounds (`--rounds`, default 3): for the
 *   handshakes a fresh bare `ws` server, durable handshake floor and gateway back to back in
 *   each round, for the polls a gateway and a bare fastify route side by side, reported as
 *   medians (`*_rounds_median`; a ratio is the median of each round's own). The first
 *   measurements run minutes apart, and the machine's speed moves between them.
 * - The highest push rate that still completes with p99 ≤ 20 ms (doubling from the offered
 *   one, or halving from it when it misses), for the gateway and for the durable floor: on a
 *   machine where even the floor misses 20 ms at the offered rate, the fixed-rate goal asks
 *   for something no server there does, and the ratio of the two rates still says how much
 *   of the floor's capacity the gateway keeps. Each step is noted with the CPU a command cost
 *   the server and PostgreSQL at that rate. The same search for the command rows floor: the
 *   durable floor whose two commits are the gateway's own creation and ack statements (the
 *   command and its audit rows), so that the gap splits into what the guarantees' rows cost
 *   and what the gateway's code around them costs.
 * - Whether PostgreSQL NOTIFY (a database-wide lock at commit) limits cross-gateway push:
 *   write transactions/s with and without a NOTIFY in each, same connections, same run.
 * - SQL statements per handshake, per 304 poll and per push, counted in the gateway process
 *   (every `pg` client query, so background work during the part is included).
 *
 * Everything runs against PostgreSQL (DATABASE_URL, default postgres://root@127.0.0.1:5432/test)
 * in a fresh schema, dropped afterwards; devices are registered up front in bulk through the
 * store, with secrets derived from a per-run key (bench/gateway/fleet.ts).
 *
 *   npm run bench -- gateway [--json] [--scale X] [--connections 15000] [--rate 1000]
 *     [--commands 10000] [--saf-batches 40] [--config-seconds 5] [--rounds 3]
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { createApiToken, loadKeyring } from '../gateway/index.js';
import { migrations } from '../migrations/index.js';
import { asCloud, migrate, openStore, type CloudStore } from '../runtime/store/index.js';
import { type BenchOptions, type BenchResult, median, round } from './harness.js';
import { startChild, type Child } from './gateway/child.js';
import { currentEtags, poll } from './gateway/configPolls.js';
import { deviceIdOf, deviceSecretOf } from './gateway/fleet.js';
import { keepAlive, send } from './gateway/http.js';
import { type LoopDelay, measureIdle, statementsOf, waitFor } from './gateway/idle.js';
import { type CpuSpent, cpuBetween, readCpu } from './cpu.js';
import {
  type EchoResult,
  measureDurableFloor,
  measureEcho,
  measurePush,
  withWarmUp,
} from './gateway/push.js';
import { measureNotify } from './gateway/notify.js';
import { measureSaf } from './gateway/saf.js';
import { measureConnectRounds, pairedMedian, type RoundRates } from './gateway/rounds.js';
import type { ServerSpec } from './gateway/server.js';

const SERVER = fileURLToPath(new URL('./gateway/server.ts', import.meta.url));
const FLAGS = [
  'scale',
  'connections',
  'rate',
  'commands',
  'saf-batches',
  'config-seconds',
  'rounds',
];
/** Idle connections one gateway process should hold. */
const CONNECTIONS_GOAL = 15_000;
/** SAF intake as a share of raw batched inserts that the design asks for. */
const SAF_GOAL = 0.3;
/** Descriptors the server process keeps for itself (database pool, listeners, files). */
const DESCRIPTOR_RESERVE = 500;
const PUSH_DEVICES = 50;
const SAF_DEVICES = 8;
const SAF_BATCH = 500;
const SAF_IN_FLIGHT = 4;
const POLL_DEVICES = 64;
const POLL_IN_FLIGHT = 16;
const GATEWAY_POOL = 10;
/** The push round trip p99 a rate must keep to count toward `push_max_rate_per_s`. */
const PUSH_P99_GOAL_MS = 20;
/**
 * How long the idle connections are held with nothing else going on, to see how late the
 * server's event loop runs meanwhile: one heartbeat interval of the gateway's (30 s,
 * gateway/link/settings.ts), whose checks visit every session once, and a second.
 */
const IDLE_HOLD_MS = 31_000;
/** Seconds of commands offered at each step of the highest-rate search. */
const PUSH_STEP_SECONDS = 3;
/**
 * Rounds of side-by-side measurements by default: connects (bare ws, durable handshake
 * floor, gateway) and 304 polls (gateway, bare fastify).
 */
const ROUNDS = 3;
/** The most rounds: each connect of a round takes a third octet of the clients' addresses. */
const MAX_ROUNDS = 50;
/** Connections opened across the two gateways (half each). */
const TWO_GATEWAY_CONNECTIONS = 4000;

/** Statements per item between two counter readings; null when the server does not count. */
const perItem = (before: number | null, after: number | null, items: number) =>
  before === null || after === null || items === 0 ? null : round((after - before) / items);

/**
 * CPU ms per command of a push measurement of `commands` (its warm-up round included): of the
 * processes `spent` was read for, and of PostgreSQL.
 */
const cpuPerPush = (spent: CpuSpent, commands: number) => ({
  process: round((1000 * spent.workerSeconds) / withWarmUp(commands)),
  postgres: round((1000 * spent.serverSeconds) / withWarmUp(commands)),
});

/**
 * Run `measure`, a push measurement of `commands` through `server`, and read over it the
 * server's event-loop gaps and its CPU per command and PostgreSQL's (undefined off Linux).
 */
async function withServerCost<T>(server: Child, commands: number, measure: () => Promise<T>) {
  const before = readCpu([server.pid]);
  await server.call({ kind: 'loopDelay' }); // from here
  const value = await measure();
  const loop = await server.call<LoopDelay>({ kind: 'loopDelay' });
  const spent = before && cpuBetween(before, readCpu([server.pid])!);
  return { value, loop, cpu: spent && cpuPerPush(spent, commands) };
}

/** The lowest rate the downward search of {@link maxPushRate} tries. */
const PUSH_MIN_SEARCH_RATE = 125;

/** A push measurement as the rate search judges and notes it. */
interface PushStep {
  rttP50: number;
  rttP99: number;
  completedPerS: number;
  /** CPU ms per command of the server and of PostgreSQL, warm-up included (null off Linux). */
  cpu: { process: number; postgres: number } | null;
}

/** Whether `step`, offered at `rate`, kept p99 ≤ PUSH_P99_GOAL_MS and completed ≥ 99 % of it. */
const pushKept = (rate: number, step: PushStep) =>
  step.rttP99 <= PUSH_P99_GOAL_MS && step.completedPerS >= 0.99 * rate;

/**
 * The highest offered push rate that completes with p99 ≤ PUSH_P99_GOAL_MS and ≥ 99 % of the
 * rate, given `base` measured at `rate`: doubling from it while the steps pass when it passed,
 * halving from it down to PUSH_MIN_SEARCH_RATE when it did not (0 when none passed). Each step
 * searched, and a `base` that missed, is noted with its p50, p99 and CPU per command; `who`
 * names the server in the notes.
 */
async function maxPushRate(
  rate: number,
  base: PushStep,
  measure: (rate: number) => Promise<PushStep>,
  who: string,
  progress: (m: string) => void,
  notes: string[],
): Promise<number> {
  const noted = (r: number, s: PushStep) => {
    const kept = pushKept(r, s);
    const cpu = s.cpu
      ? `; CPU per command ${s.cpu.process} ms (${who}) + ${s.cpu.postgres} ms (PostgreSQL), warm-up included`
      : '';
    notes.push(
      `${who}: ${r}/s offered ${kept ? 'kept' : 'missed'} the goal: push p50 ${round(s.rttP50)} ms, p99 ${round(s.rttP99)} ms, ${round(s.completedPerS)} completed/s${cpu} (the client — one process, ${PUSH_DEVICES} sockets — shares the machine's 2 cores)`,
    );
    return kept;
  };
  const step = async (r: number) => {
    progress(`${who}: searching the highest push rate, ${r}/s offered`);
    const s = await measure(r);
    progress(`  p99 ${s.rttP99.toFixed(1)} ms, ${Math.round(s.completedPerS)} completed/s`);
    return noted(r, s);
  };
  if (!pushKept(rate, base)) {
    noted(rate, base);
    for (let r = rate / 2; r >= PUSH_MIN_SEARCH_RATE; r /= 2) if (await step(r)) return r;
    return 0;
  }
  let best = rate;
  for (let r = rate * 2; r <= 32_000 && (await step(r)); r *= 2) best = r;
  return best;
}

interface Settings {
  connections: number;
  rate: number;
  commands: number;
  safBatches: number;
  configSeconds: number;
  /** Rounds of side-by-side connects and 304 polls after the other parts (0: none). */
  rounds: number;
}

/** The soft limit on open files of this process (children inherit it). */
function openFileLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const soft = Number(line?.split(/\s{2,}/)[1]);
  return Number.isFinite(soft) ? soft : 1024;
}

function settingsOf(options: BenchOptions, notes: string[]): Settings {
  const unknown = Object.keys(options.flags).filter((f) => !FLAGS.includes(f));
  if (unknown.length) throw new Error(`bench gateway: unknown flag(s) --${unknown.join(', --')}`);
  const number = (flag: string, fallback: number) => {
    const value = options.flags[flag] === undefined ? fallback : Number(options.flags[flag]);
    if (!(value > 0)) throw new Error(`bench gateway: --${flag} must be a positive number`);
    return value;
  };
  const limit = openFileLimit() - DESCRIPTOR_RESERVE;
  let connections = Math.max(
    100,
    Math.round(number('connections', CONNECTIONS_GOAL * options.scale)),
  );
  if (connections > limit) {
    notes.push(
      `idle connections capped at ${limit}: the open-file limit is ${limit + DESCRIPTOR_RESERVE} per process`,
    );
    connections = limit;
  }
  return {
    connections,
    rate: number('rate', 1000),
    commands: Math.max(500, Math.round(number('commands', 10_000 * options.scale))),
    safBatches: Math.max(4, Math.round(number('saf-batches', 40 * options.scale))),
    configSeconds: Math.max(1, number('config-seconds', 5 * options.scale)),
    rounds: roundsOf(options.flags.rounds),
  };
}

/** Each server's rates, one per round, rounded: `gateway: 1200, 1350; raw ws: …`. */
const byRound = (rates: RoundRates) =>
  [...rates].map(([name, values]) => `${name}: ${values.map(Math.round).join(', ')}`).join('; ');

/** `--rounds`: a whole number from 0 to {@link MAX_ROUNDS} (default {@link ROUNDS}). */
function roundsOf(flag: string | undefined): number {
  if (flag === undefined) return ROUNDS;
  const value = Number(flag);
  if (!Number.isInteger(value) || value < 0 || value > MAX_ROUNDS)
    throw new Error(`bench gateway: --rounds must be a whole number from 0 to ${MAX_ROUNDS}`);
  return value;
}

async function admin(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Register `count` devices in bulk, each with its derived secret sealed under `keys`. */
async function registerDevices(
  store: CloudStore,
  seal: (secret: string) => string,
  benchKey: string,
  count: number,
): Promise<void> {
  for (let from = 0; from < count; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - from) }, (_, i) => {
      const deviceId = deviceIdOf(from + i);
      return {
        device_id: deviceId,
        device_name: `Bench terminal ${from + i}`,
        device_type: 'POS',
        location: `store-${(from + i) % 97}`,
        secret_ciphertext: seal(deviceSecretOf(benchKey, deviceId)),
      };
    });
    await store.cloud.insertInto('edge_devices').values(rows).execute();
  }
}

/** Finished commands each device has in its history before the run. */
const HISTORY_PER_DEVICE = 10;

/**
 * Give every device a history of finished commands, as a fleet that has run for a while has,
 * and gather the tables' statistics: the plans PostgreSQL makes for the run are then those of
 * a running system, not those of empty tables (where a sequential scan is cheapest, and a
 * plan made then is kept while the table grows).
 */
async function seedHistory(store: CloudStore): Promise<void> {
  await sql`
    INSERT INTO device_commands (command_id, device_id, command_type, payload, status,
      max_retries, created_by, created_at, delivered_at, executed_at)
    SELECT gen_random_uuid(), d.device_id, 'UPDATE_CONFIG', '{"reason":"history"}', 'EXECUTED',
      3, 'bench', t.at, t.at, t.at
    FROM edge_devices AS d
    CROSS JOIN LATERAL (
      SELECT now() - make_interval(hours => g) AS at FROM generate_series(1, ${HISTORY_PER_DEVICE}) AS g
    ) AS t`.execute(store.db);
  await sql`ANALYZE edge_devices, device_commands`.execute(store.db);
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/** Run the gateway benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = {
    bench: 'gateway',
    metrics: {},
    baselines: {},
    ratios: {},
    notes: [],
  };
  const { progress } = options;
  const s = settingsOf(options, result.notes);
  const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const schema = `saffron_bench_gateway_${process.pid}`;
  const keyDir = mkdtempSync(join(tmpdir(), 'saffron-bench-keys-'));
  const signingKeyPem = generateKeyPairSync('ed25519')
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const masterKeyHex = randomBytes(32).toString('hex');
  const keys = loadKeyring(keyDir, {
    SAFFRON_SIGNING_KEY: signingKeyPem,
    SAFFRON_MASTER_KEY: masterKeyHex,
  });
  const benchKey = randomBytes(32).toString('base64url');
  // device numbers of each part
  const idle = 0;
  const push = range(s.connections, PUSH_DEVICES);
  const saf = range(s.connections + PUSH_DEVICES, SAF_DEVICES);
  const polling = range(s.connections + PUSH_DEVICES + SAF_DEVICES, POLL_DEVICES);
  const deviceCount = s.connections + PUSH_DEVICES + SAF_DEVICES + POLL_DEVICES;

  const children = new Set<Child>();
  const start = async (spec: ServerSpec) => {
    const child = await startChild(SERVER, spec);
    children.add(child);
    return { child, url: child.ready.url as string };
  };
  const stop = (child: Child) => {
    child.kill();
    children.delete(child);
  };
  let store: CloudStore | undefined;
  let pool: pg.Pool | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const child of children) child.kill();
      await pool?.end();
      await store?.close();
      await admin(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      rmSync(keyDir, { recursive: true, force: true });
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`gateway: ${signal}, stopping servers and dropping schema ${schema}`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    progress(`schema ${schema}: migrating, registering ${deviceCount} devices`);
    await admin(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    store = asCloud(await openStore(url, { postgres: { schema, maxConnections: 4 } }));
    await migrate(store, migrations);
    await registerDevices(store, (secret) => keys.seal(secret), benchKey, deviceCount);
    progress(`  ${HISTORY_PER_DEVICE} finished commands of history per device`);
    await seedHistory(store);
    const { token } = await createApiToken(store, { name: 'bench admin', role: 'admin' });
    const { rows } = await sql<{
      v: string;
    }>`SELECT current_setting('server_version') AS v`.execute(store.db);
    result.notes.push(
      `PostgreSQL ${rows[0]?.v}, ${cpus().length} cores, Node ${process.versions.node}; gateway: one process, pool of ${GATEWAY_POOL} connections; open-file limit ${openFileLimit()}`,
    );

    // ---- the gateway (a second one joins it for the two-gateway part)
    const db = store.cloud;
    /** Wait until `server` holds no connection and every device is recorded OFFLINE. */
    const disconnectsRecorded = (server: Child) =>
      waitFor(
        async () =>
          (await server.call<number>({ kind: 'connections' })) === 0 &&
          Number(
            (
              await db
                .selectFrom('edge_devices')
                .select((eb) => eb.fn.countAll().as('n'))
                .where('status', '<>', 'OFFLINE')
                .executeTakeFirstOrThrow()
            ).n,
          ) === 0,
      );
    const startGateway = () =>
      start({
        kind: 'saffron',
        databaseUrl: url,
        schema,
        signingKeyPem,
        masterKeyHex,
        poolSize: GATEWAY_POOL,
      });
    const gateway = await startGateway();
    const pushThroughGateway = (rate: number, count: number) =>
      measurePush({
        url: gateway.url,
        adminToken: token,
        benchKey,
        devices: push,
        count,
        rate,
        progress,
      });
    const agent = keepAlive(2);
    const published = await send(agent, gateway.url, '/api/v1/config/fleet/*', {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ floor_limit_minor: 5000, currency: 'EUR', offline_max_count: 50 }),
    });
    agent.destroy();
    if (published.status !== 200) throw new Error(`publishing config: ${published.status}`);

    progress(`idle: ${s.connections} device connections to one gateway process`);
    const held = await measureIdle({
      server: gateway.child,
      url: gateway.url,
      benchKey,
      first: idle,
      count: s.connections,
      subnet: 1,
      holdMs: IDLE_HOLD_MS,
      whileHeld: async (fleetPids) => {
        progress(
          `push with the ${s.connections} idle connections held: ${s.commands} commands at ${s.rate}/s`,
        );
        const fleetCpu = readCpu(fleetPids);
        const {
          value: pushed,
          loop,
          cpu,
        } = await withServerCost(gateway.child, s.commands, () =>
          pushThroughGateway(s.rate, s.commands),
        );
        const fleetSpent = fleetCpu && cpuBetween(fleetCpu, readCpu(fleetPids)!);
        result.metrics.push_fleet_held_rtt_p50_ms = round(pushed.rttP50);
        result.metrics.push_fleet_held_rtt_p99_ms = round(pushed.rttP99);
        result.metrics.push_fleet_held_completed_per_s = round(pushed.completedPerS);
        result.metrics.push_fleet_held_event_loop_delay_p99_ms = round(loop.p99Ms);
        result.metrics.push_fleet_held_event_loop_delay_max_ms = round(loop.maxMs);
        if (cpu && fleetSpent) {
          result.metrics.push_fleet_held_cpu_ms_gateway = cpu.process;
          result.metrics.push_fleet_held_cpu_ms_postgres = cpu.postgres;
          result.metrics.push_fleet_held_cpu_ms_fleet = cpuPerPush(fleetSpent, s.commands).process;
        }
        if (pushed.completed < pushed.sent || pushed.failedPosts > 0)
          result.notes.push(
            `push with the idle connections held: ${pushed.completed} of ${pushed.sent} commands completed (${pushed.failedPosts} POSTs failed); percentiles over the completed`,
          );
        progress(
          `  round trip p50 ${pushed.rttP50.toFixed(1)} ms, p99 ${pushed.rttP99.toFixed(1)} ms; ${Math.round(pushed.completedPerS)} completed/s`,
        );
      },
      progress,
    });
    result.metrics.idle_connections = held.held;
    result.metrics.bytes_per_connection = Math.round(held.bytesPerConnection);
    result.metrics.heap_bytes_per_connection = Math.round(held.heapBytesPerConnection);
    result.metrics.connects_per_s = round(held.held / held.connectSeconds);
    if (held.cpuMsPerConnection) {
      result.metrics.connect_cpu_ms_server = round(held.cpuMsPerConnection.server);
      result.metrics.connect_cpu_ms_clients = round(held.cpuMsPerConnection.clients);
      result.metrics.connect_cpu_ms_postgres = round(held.cpuMsPerConnection.postgres);
    }
    result.metrics.db_statements_per_handshake =
      held.statementsPerConnection === null ? null : round(held.statementsPerConnection);
    if (held.heldLoopDelay) {
      result.metrics.idle_event_loop_delay_p99_ms = round(held.heldLoopDelay.p99Ms);
      result.metrics.idle_event_loop_delay_max_ms = round(held.heldLoopDelay.maxMs);
    }
    if (held.heldCpuShare) {
      result.metrics.idle_cpu_share_gateway = round(held.heldCpuShare.server);
      result.metrics.idle_cpu_share_fleet = round(held.heldCpuShare.clients);
      result.metrics.idle_cpu_share_postgres = round(held.heldCpuShare.postgres);
    }
    if (held.failed > 0)
      result.notes.push(`${held.failed} gateway connections failed (first: ${held.firstError})`);
    progress('  waiting for the gateway to record every disconnect');
    await disconnectsRecorded(gateway.child);

    progress(`push: ${s.commands} commands at ${s.rate}/s`);
    const pushStatements = await statementsOf(gateway.child);
    const {
      value: pushed,
      loop: pushLoop,
      cpu: pushCpu,
    } = await withServerCost(gateway.child, s.commands, () =>
      pushThroughGateway(s.rate, s.commands),
    );
    result.metrics.push_rtt_p50_ms = round(pushed.rttP50);
    result.metrics.push_rtt_p99_ms = round(pushed.rttP99);
    result.metrics.push_delivery_p50_ms = round(pushed.deliveryP50);
    result.metrics.push_delivery_p99_ms = round(pushed.deliveryP99);
    result.metrics.push_commands_issued_per_s = round(pushed.issuedPerS);
    result.metrics.push_commands_completed_per_s = round(pushed.completedPerS);
    result.metrics.push_event_loop_delay_p99_ms = round(pushLoop.p99Ms);
    result.metrics.push_event_loop_delay_max_ms = round(pushLoop.maxMs);
    if (pushCpu) {
      result.metrics.push_cpu_ms_gateway = pushCpu.process;
      result.metrics.push_cpu_ms_postgres = pushCpu.postgres;
    }
    result.metrics.db_statements_per_push = perItem(
      pushStatements,
      await statementsOf(gateway.child),
      pushed.completed,
    );
    progress(
      `  round trip p50 ${pushed.rttP50.toFixed(1)} ms, p99 ${pushed.rttP99.toFixed(1)} ms; delivery p50 ${pushed.deliveryP50.toFixed(1)} ms, p99 ${pushed.deliveryP99.toFixed(1)} ms; ${Math.round(pushed.completedPerS)} completed/s`,
    );
    if (pushed.completedPerS < 0.95 * s.rate)
      result.notes.push(
        `push: the gateway completed ${Math.round(pushed.completedPerS)} commands/s, below the ${s.rate}/s offered: the round trip includes the queue that built up (open loop)`,
      );
    if (pushed.completed < pushed.sent || pushed.failedPosts > 0)
      result.notes.push(
        `push: ${pushed.completed} of ${pushed.sent} commands completed (${pushed.failedPosts} POSTs failed); percentiles over the completed`,
      );
    result.metrics.push_max_rate_per_s = await maxPushRate(
      s.rate,
      { ...pushed, cpu: pushCpu ?? null },
      async (rate) => {
        const count = Math.max(2000, rate * PUSH_STEP_SECONDS);
        const { value, cpu } = await withServerCost(gateway.child, count, () =>
          pushThroughGateway(rate, count),
        );
        return { ...value, cpu: cpu ?? null };
      },
      'gateway',
      progress,
      result.notes,
    );

    progress(`saf: ${s.safBatches} batches of ${SAF_BATCH} per side, ${SAF_IN_FLIGHT} in flight`);
    pool = new pg.Pool({
      connectionString: url,
      max: SAF_IN_FLIGHT,
      options: `-c search_path=${schema}`,
    });
    const intake = await measureSaf({
      url: gateway.url,
      benchKey,
      devices: saf,
      batches: s.safBatches,
      batchSize: SAF_BATCH,
      inFlight: SAF_IN_FLIGHT,
      rounds: 4,
      pool,
      progress,
    });
    result.metrics.saf_records_per_s = round(intake.recordsPerS);
    result.baselines.raw_batch_insert_rows_per_s = round(intake.rawRowsPerS);
    result.ratios.saf_vs_raw_batch_insert = round(intake.recordsPerS / intake.rawRowsPerS);
    progress(
      `  ${Math.round(intake.recordsPerS)} records/s vs raw ${Math.round(intake.rawRowsPerS)} rows/s`,
    );
    if (intake.refused > 0) result.notes.push(`saf: ${intake.refused} records refused`);

    progress(`config: ${s.configSeconds} s of 304 polls, ${POLL_IN_FLIGHT} in flight`);
    const etags = await currentEtags(gateway.url, benchKey, polling);
    const pollStatements = await statementsOf(gateway.child);
    const polls = await poll({
      url: gateway.url,
      benchKey,
      devices: polling,
      etagOf: (deviceId) => etags.get(deviceId)!,
      seconds: s.configSeconds,
      inFlight: POLL_IN_FLIGHT,
    });
    result.metrics.config_304_per_s = round(polls.perS);
    result.metrics.db_statements_per_poll = perItem(
      pollStatements,
      await statementsOf(gateway.child),
      polls.notModified + polls.other,
    );
    if (polls.other > 0)
      result.notes.push(`config: ${polls.other} polls were not 304 (first: ${polls.firstOther})`);
    progress(`  ${Math.round(polls.perS)} polls/s`);

    // ---- two gateway processes on the same database
    const second = await startGateway();
    const pair = [gateway, second];
    const perGateway = Math.floor(Math.min(s.connections, TWO_GATEWAY_CONNECTIONS) / 2);
    progress(`two gateways: ${2 * perGateway} device connections, half to each`);
    const both = await Promise.all(
      pair.map((g, i) =>
        measureIdle({
          server: g.child,
          url: g.url,
          benchKey,
          first: idle + i * perGateway,
          count: perGateway,
          subnet: 3 + i,
          progress,
        }),
      ),
    );
    result.metrics.connects_per_s_2g = round(
      both.reduce((n, r) => n + r.held, 0) / Math.max(...both.map((r) => r.connectSeconds)),
    );
    progress(`two gateways: ${s.configSeconds} s of 304 polls, half of the devices on each`);
    const half = Math.ceil(polling.length / 2);
    const pairPolls = await Promise.all(
      pair.map((g, i) =>
        poll({
          url: g.url,
          benchKey,
          devices: polling.slice(i * half, (i + 1) * half),
          etagOf: (deviceId) => etags.get(deviceId)!,
          seconds: s.configSeconds,
          inFlight: POLL_IN_FLIGHT / 2,
        }),
      ),
    );
    result.metrics.config_304_per_s_2g = round(pairPolls.reduce((n, p) => n + p.perS, 0));
    if (pairPolls.some((p) => p.other > 0))
      result.notes.push(
        `config (2 gateways): ${pairPolls.reduce((n, p) => n + p.other, 0)} polls were not 304`,
      );
    progress(
      `  ${Math.round(result.metrics.connects_per_s_2g ?? 0)} connects/s, ${Math.round(result.metrics.config_304_per_s_2g ?? 0)} polls/s`,
    );
    result.notes.push(
      `*_2g: two gateway processes on the same database, ${2 * perGateway} connections and the poll devices split between them, each pair measured at the same time; on 2 cores both share the CPU with the clients and PostgreSQL`,
    );
    stop(second.child);
    stop(gateway.child);

    // ---- baselines
    const raw = await start({ kind: 'raw-ws' });
    progress(`baseline: ${s.connections} connections to a bare ws server`);
    const rawHeld = await measureIdle({
      server: raw.child,
      url: raw.url,
      benchKey,
      first: idle,
      count: s.connections,
      subnet: 2,
      holdMs: IDLE_HOLD_MS,
      progress,
    });
    result.baselines.raw_ws_idle_connections = rawHeld.held;
    result.baselines.raw_ws_bytes_per_connection = Math.round(rawHeld.bytesPerConnection);
    result.baselines.raw_ws_connects_per_s = round(rawHeld.held / rawHeld.connectSeconds);
    if (rawHeld.cpuMsPerConnection) {
      result.baselines.raw_ws_connect_cpu_ms_server = round(rawHeld.cpuMsPerConnection.server);
      result.baselines.raw_ws_connect_cpu_ms_clients = round(rawHeld.cpuMsPerConnection.clients);
    }
    if (rawHeld.heldLoopDelay) {
      result.baselines.raw_ws_idle_event_loop_delay_p99_ms = round(rawHeld.heldLoopDelay.p99Ms);
      result.baselines.raw_ws_idle_event_loop_delay_max_ms = round(rawHeld.heldLoopDelay.maxMs);
    }
    progress(`baseline: ws echo, ${s.commands} frames at ${s.rate}/s`);
    const echo = await measureEcho({
      url: raw.url,
      sockets: PUSH_DEVICES,
      count: s.commands,
      rate: s.rate,
    });
    result.baselines.raw_ws_echo_rtt_p50_ms = round(echo.p50);
    result.baselines.raw_ws_echo_rtt_p99_ms = round(echo.p99);
    stop(raw.child);

    // the idle devices' connects to a floor server, from clients on their own addresses
    const floorConnects = (floor: { child: Child; url: string }, subnet: number) =>
      measureIdle({
        server: floor.child,
        url: floor.url,
        benchKey,
        first: idle,
        count: s.connections,
        subnet,
        progress,
      });
    const handshake = await start({ kind: 'challenge-ws', benchKey });
    progress(`baseline: ${s.connections} connections to the handshake floor (bare ws + proof)`);
    const floorHeld = await floorConnects(handshake, 5);
    result.baselines.handshake_floor_connects_per_s = round(
      floorHeld.held / floorHeld.connectSeconds,
    );
    result.baselines.handshake_floor_bytes_per_connection = Math.round(
      floorHeld.bytesPerConnection,
    );
    if (floorHeld.cpuMsPerConnection) {
      result.baselines.handshake_floor_connect_cpu_ms_server = round(
        floorHeld.cpuMsPerConnection.server,
      );
      result.baselines.handshake_floor_connect_cpu_ms_clients = round(
        floorHeld.cpuMsPerConnection.clients,
      );
    }
    if (floorHeld.failed > 0)
      result.notes.push(
        `${floorHeld.failed} handshake floor connections failed (first: ${floorHeld.firstError})`,
      );
    stop(handshake.child);

    const startDurableHandshake = () =>
      start({
        kind: 'durable-handshake',
        databaseUrl: url,
        schema,
        poolSize: GATEWAY_POOL,
        benchKey,
      });
    const durableHandshake = await startDurableHandshake();
    progress(
      `baseline: ${s.connections} connections to the durable handshake floor (the floor + the device rows)`,
    );
    const durableHeld = await floorConnects(durableHandshake, 7);
    result.baselines.durable_handshake_floor_connects_per_s = round(
      durableHeld.held / durableHeld.connectSeconds,
    );
    if (durableHeld.cpuMsPerConnection) {
      const cpu = durableHeld.cpuMsPerConnection;
      result.baselines.durable_handshake_floor_connect_cpu_ms_server = round(cpu.server);
      result.baselines.durable_handshake_floor_connect_cpu_ms_clients = round(cpu.clients);
      result.baselines.durable_handshake_floor_connect_cpu_ms_postgres = round(cpu.postgres);
    }
    result.baselines.durable_handshake_floor_db_statements_per_handshake =
      durableHeld.statementsPerConnection === null
        ? null
        : round(durableHeld.statementsPerConnection);
    if (durableHeld.failed > 0)
      result.notes.push(
        `${durableHeld.failed} durable handshake floor connections failed (first: ${durableHeld.firstError})`,
      );
    stop(durableHandshake.child);

    const durable = await start({
      kind: 'durable-ws',
      databaseUrl: url,
      schema,
      poolSize: GATEWAY_POOL,
      benchKey,
    });
    progress(
      `baseline: durable push floor (two commits per command), ${s.commands} at ${s.rate}/s`,
    );
    const floorPush = (rate: number, count: number) =>
      measureDurableFloor({ url: durable.url, sockets: PUSH_DEVICES, count, rate });
    const {
      value: floor,
      loop: floorLoop,
      cpu: floorCpu,
    } = await withServerCost(durable.child, s.commands, () => floorPush(s.rate, s.commands));
    result.baselines.durable_push_floor_rtt_p50_ms = round(floor.p50);
    result.baselines.durable_push_floor_rtt_p99_ms = round(floor.p99);
    result.baselines.durable_push_floor_event_loop_delay_p99_ms = round(floorLoop.p99Ms);
    result.baselines.durable_push_floor_event_loop_delay_max_ms = round(floorLoop.maxMs);
    if (floor.completed < s.commands)
      result.notes.push(
        `durable push floor: ${floor.completed} of ${s.commands} commands completed; percentiles over the completed`,
      );
    if (floorCpu) {
      result.baselines.durable_push_floor_cpu_ms_server = floorCpu.process;
      result.baselines.durable_push_floor_cpu_ms_postgres = floorCpu.postgres;
    }
    // the highest rate a floor server keeps, searched from its measurement at the offered rate
    const floorMaxRate = (
      child: Child,
      push: (rate: number, count: number) => Promise<EchoResult>,
      base: EchoResult,
      baseCpu: PushStep['cpu'] | undefined,
      who: string,
    ) => {
      const floorStep = (step: EchoResult, cpu: PushStep['cpu'] | undefined): PushStep => ({
        rttP50: step.p50,
        rttP99: step.p99,
        completedPerS: step.completedPerS,
        cpu: cpu ?? null,
      });
      return maxPushRate(
        s.rate,
        floorStep(base, baseCpu),
        async (rate) => {
          const count = Math.max(2000, rate * PUSH_STEP_SECONDS);
          const { value, cpu } = await withServerCost(child, count, () => push(rate, count));
          return floorStep(value, cpu);
        },
        who,
        progress,
        result.notes,
      );
    };
    result.baselines.durable_push_floor_max_rate_per_s = await floorMaxRate(
      durable.child,
      floorPush,
      floor,
      floorCpu,
      'durable push floor',
    );
    progress(`baseline: the durable push floor beside ${s.connections} idle device sockets`);
    const floorFleet = await measureIdle({
      server: durable.child,
      url: durable.url,
      benchKey,
      first: idle,
      count: s.connections,
      subnet: 6,
      holdMs: IDLE_HOLD_MS,
      whileHeld: async () => {
        progress(`  ${s.commands} commands at ${s.rate}/s`);
        const {
          value: held,
          loop,
          cpu,
        } = await withServerCost(durable.child, s.commands, () => floorPush(s.rate, s.commands));
        result.baselines.durable_push_floor_fleet_held_rtt_p50_ms = round(held.p50);
        result.baselines.durable_push_floor_fleet_held_rtt_p99_ms = round(held.p99);
        result.baselines.durable_push_floor_fleet_held_event_loop_delay_p99_ms = round(loop.p99Ms);
        result.baselines.durable_push_floor_fleet_held_event_loop_delay_max_ms = round(loop.maxMs);
        if (cpu) {
          result.baselines.durable_push_floor_fleet_held_cpu_ms_server = cpu.process;
          result.baselines.durable_push_floor_fleet_held_cpu_ms_postgres = cpu.postgres;
        }
        progress(`  p99 ${held.p99.toFixed(1)} ms, ${Math.round(held.completedPerS)} completed/s`);
      },
      progress,
    });
    if (floorFleet.heldCpuShare) {
      result.baselines.durable_push_floor_idle_cpu_share_server = round(
        floorFleet.heldCpuShare.server,
      );
      result.baselines.durable_push_floor_idle_cpu_share_fleet = round(
        floorFleet.heldCpuShare.clients,
      );
    }
    if (floorFleet.held < s.connections)
      result.notes.push(
        `durable push floor: ${floorFleet.held} of ${s.connections} idle device sockets held (first error: ${floorFleet.firstError})`,
      );
    stop(durable.child);

    // a floor writing the command's own rows, measured at the offered rate and searched
    const rowsFloor = async (grouped: boolean, key: string, who: string) => {
      const floorServer = await start({
        kind: 'durable-ws',
        databaseUrl: url,
        schema,
        poolSize: GATEWAY_POOL,
        benchKey,
        audited: true,
        grouped,
      });
      progress(`baseline: the ${who}, ${s.commands} at ${s.rate}/s`);
      const push = (rate: number, count: number) =>
        measureDurableFloor({ url: floorServer.url, sockets: PUSH_DEVICES, count, rate });
      const before = await statementsOf(floorServer.child);
      const { value: at, cpu } = await withServerCost(floorServer.child, s.commands, () =>
        push(s.rate, s.commands),
      );
      result.baselines[`${key}_rtt_p50_ms`] = round(at.p50);
      result.baselines[`${key}_rtt_p99_ms`] = round(at.p99);
      if (cpu) {
        result.baselines[`${key}_cpu_ms_server`] = cpu.process;
        result.baselines[`${key}_cpu_ms_postgres`] = cpu.postgres;
      }
      result.baselines[`${key}_db_statements_per_push`] = perItem(
        before,
        await statementsOf(floorServer.child),
        at.completed,
      );
      progress(
        `  p50 ${at.p50.toFixed(1)} ms, p99 ${at.p99.toFixed(1)} ms, ${Math.round(at.completedPerS)} completed/s`,
      );
      if (at.completed < s.commands)
        result.notes.push(
          `${who}: ${at.completed} of ${s.commands} commands completed; percentiles over the completed`,
        );
      result.baselines[`${key}_max_rate_per_s`] = await floorMaxRate(
        floorServer.child,
        push,
        at,
        cpu,
        who,
      );
      stop(floorServer.child);
    };
    await rowsFloor(
      false,
      'command_rows_push_floor',
      "floor with the command's own rows (the gateway's two statements)",
    );
    await rowsFloor(
      true,
      'grouped_rows_push_floor',
      "floor with the command's own rows in the gateway's group commit",
    );

    const bareEtag = '"bench-config-etag"';
    const bare = await start({ kind: 'bare-fastify', etag: bareEtag });
    progress(`baseline: ${s.configSeconds} s of 304 polls to a bare fastify route`);
    const barePolls = await poll({
      url: bare.url,
      benchKey,
      devices: polling,
      etagOf: () => bareEtag,
      seconds: s.configSeconds,
      inFlight: POLL_IN_FLIGHT,
    });
    result.baselines.bare_fastify_304_per_s = round(barePolls.perS);
    stop(bare.child);

    if (s.rounds > 0) {
      // the connects again, each server started afresh, the three of a round back to back
      const rates = await measureConnectRounds({
        contenders: [
          { name: 'raw ws', start: () => start({ kind: 'raw-ws' }), stop },
          {
            name: 'durable handshake floor',
            start: startDurableHandshake,
            settle: disconnectsRecorded,
            stop,
          },
          { name: 'gateway', start: startGateway, settle: disconnectsRecorded, stop },
        ],
        rounds: s.rounds,
        firstSubnet: 20,
        connect: floorConnects,
        progress,
      });
      result.metrics.connects_per_s_rounds_median = round(median(rates.get('gateway')!));
      result.baselines.raw_ws_connects_per_s_rounds_median = round(median(rates.get('raw ws')!));
      result.baselines.durable_handshake_floor_connects_per_s_rounds_median = round(
        median(rates.get('durable handshake floor')!),
      );
      result.ratios.connects_vs_raw_ws_rounds_median = round(
        pairedMedian(rates, 'gateway', 'raw ws'),
      );
      result.ratios.connects_vs_durable_handshake_floor_rounds_median = round(
        pairedMedian(rates, 'gateway', 'durable handshake floor'),
      );
      result.ratios.durable_handshake_floor_vs_raw_ws_rounds_median = round(
        pairedMedian(rates, 'durable handshake floor', 'raw ws'),
      );
      result.notes.push(
        `connects_per_s_rounds_median / raw_ws_connects_per_s_rounds_median / durable_handshake_floor_connects_per_s_rounds_median and their ratios: ${s.rounds} more rounds of the ${s.connections} connects, each round a bare ws server, the durable handshake floor and a gateway, in that order, each started afresh (cold caches) and measured within a minute of the others; a rate is the median over rounds, a ratio the median over rounds of the two rates of the same round — the speed of a shared machine moves a single connect phase by half between runs, and two measured minutes apart (connects_vs_raw_ws) with it; handshakes/s by round — ${byRound(rates)}`,
      );
      progress(
        `  gateway ÷ bare ws by round: ${rates
          .get('gateway')!
          .map((g, i) => (g / rates.get('raw ws')![i]!).toFixed(2))
          .join(', ')}`,
      );

      // the 304 polls again, a gateway and bare fastify in turn, both running throughout
      progress(
        `304 poll rounds: ${s.rounds} × ${s.configSeconds} s to a gateway, then as long to bare fastify`,
      );
      const pollGateway = await startGateway();
      const pollBare = await start({ kind: 'bare-fastify', etag: bareEtag });
      const gatewayEtags = await currentEtags(pollGateway.url, benchKey, polling);
      const pollRates: RoundRates = new Map([
        ['gateway', []],
        ['bare fastify', []],
      ]);
      for (let r = 0; r < s.rounds; r++) {
        for (const [name, server, etagOf] of [
          ['gateway', pollGateway, (id: string) => gatewayEtags.get(id)!],
          ['bare fastify', pollBare, () => bareEtag],
        ] as const) {
          const polled = await poll({
            url: server.url,
            benchKey,
            devices: polling,
            etagOf,
            seconds: s.configSeconds,
            inFlight: POLL_IN_FLIGHT,
          });
          if (polled.other > 0)
            throw new Error(`304 poll round ${r + 1}, ${name}: ${polled.other} polls were not 304`);
          pollRates.get(name)!.push(polled.perS);
        }
      }
      stop(pollGateway.child);
      stop(pollBare.child);
      result.metrics.config_304_per_s_rounds_median = round(median(pollRates.get('gateway')!));
      result.baselines.bare_fastify_304_per_s_rounds_median = round(
        median(pollRates.get('bare fastify')!),
      );
      result.ratios.config_304_vs_bare_fastify_rounds_median = round(
        pairedMedian(pollRates, 'gateway', 'bare fastify'),
      );
      result.notes.push(
        `config_304_*_rounds_median / bare_fastify_304_per_s_rounds_median: ${s.rounds} more rounds of ${s.configSeconds} s of 304 polls, each round to a gateway started for them and then to a bare fastify route, the two servers running side by side; medians as for the connects — polls/s by round — ${byRound(pollRates)}`,
      );
    }

    progress('baseline: write transactions/s with and without a NOTIFY, 8 connections');
    const notify = await measureNotify({
      url,
      schema,
      concurrency: 8,
      seconds: Math.max(2, 2 * s.configSeconds),
      rounds: 3,
    });
    result.baselines.pg_commits_per_s_c8 = round(notify.plainCommitsPerS);
    result.baselines.pg_notify_commits_per_s_c8 = round(notify.notifyCommitsPerS);
    result.ratios.notify_vs_plain_commits = round(
      notify.notifyCommitsPerS / notify.plainCommitsPerS,
    );

    const ratio = (a: number | null | undefined, b: number | null | undefined) =>
      typeof a === 'number' && typeof b === 'number' && b > 0 ? round(a / b) : null;
    const ratios: [string, number | null | undefined, number | null | undefined][] = [
      [
        'bytes_per_connection_vs_raw_ws',
        result.metrics.bytes_per_connection,
        result.baselines.raw_ws_bytes_per_connection,
      ],
      ['connects_vs_raw_ws', result.metrics.connects_per_s, result.baselines.raw_ws_connects_per_s],
      [
        'connects_vs_handshake_floor',
        result.metrics.connects_per_s,
        result.baselines.handshake_floor_connects_per_s,
      ],
      [
        'handshake_floor_vs_raw_ws',
        result.baselines.handshake_floor_connects_per_s,
        result.baselines.raw_ws_connects_per_s,
      ],
      [
        'connects_vs_durable_handshake_floor',
        result.metrics.connects_per_s,
        result.baselines.durable_handshake_floor_connects_per_s,
      ],
      [
        'durable_handshake_floor_vs_raw_ws',
        result.baselines.durable_handshake_floor_connects_per_s,
        result.baselines.raw_ws_connects_per_s,
      ],
      [
        'push_rtt_p99_vs_raw_echo',
        result.metrics.push_rtt_p99_ms,
        result.baselines.raw_ws_echo_rtt_p99_ms,
      ],
      [
        'idle_cpu_share_gateway_vs_durable_floor',
        result.metrics.idle_cpu_share_gateway,
        result.baselines.durable_push_floor_idle_cpu_share_server,
      ],
      [
        'push_fleet_held_rtt_p99_vs_durable_floor_fleet_held',
        result.metrics.push_fleet_held_rtt_p99_ms,
        result.baselines.durable_push_floor_fleet_held_rtt_p99_ms,
      ],
      [
        'push_fleet_held_rtt_p99_vs_push_rtt_p99',
        result.metrics.push_fleet_held_rtt_p99_ms,
        result.metrics.push_rtt_p99_ms,
      ],
      [
        'push_rtt_p99_vs_durable_floor',
        result.metrics.push_rtt_p99_ms,
        result.baselines.durable_push_floor_rtt_p99_ms,
      ],
      [
        'push_max_rate_vs_durable_floor',
        result.metrics.push_max_rate_per_s,
        result.baselines.durable_push_floor_max_rate_per_s,
      ],
      [
        'push_max_rate_vs_command_rows_floor',
        result.metrics.push_max_rate_per_s,
        result.baselines.command_rows_push_floor_max_rate_per_s,
      ],
      [
        'push_rtt_p99_vs_grouped_rows_floor',
        result.metrics.push_rtt_p99_ms,
        result.baselines.grouped_rows_push_floor_rtt_p99_ms,
      ],
      [
        'push_max_rate_vs_grouped_rows_floor',
        result.metrics.push_max_rate_per_s,
        result.baselines.grouped_rows_push_floor_max_rate_per_s,
      ],
      [
        'command_rows_floor_max_rate_vs_durable_floor',
        result.baselines.command_rows_push_floor_max_rate_per_s,
        result.baselines.durable_push_floor_max_rate_per_s,
      ],
      [
        'config_304_vs_bare_fastify',
        result.metrics.config_304_per_s,
        result.baselines.bare_fastify_304_per_s,
      ],
    ];
    for (const [key, numerator, denominator] of ratios)
      result.ratios[key] = ratio(numerator, denominator);

    result.notes.push(
      'bytes_per_connection: growth of the server process RSS (after full GCs) from idle to holding idle_connections, divided by them; each connection did a signed upgrade and a hello',
      "push_rtt_*: from the moment the operator POST was due (open loop at the rate) until the device received the server's `acked` frame (command created, pushed, executed, EXECUTED committed); push_delivery_*: until the `command` frame reached the device",
      `durable_push_floor_rtt_*: the same paced rate over the same transports — the operator's HTTP POST (same keep-alive client) to a bare node http server (no fastify) that commits one row (autocommit, pool of ${GATEWAY_POOL}) before pushing the command on the device's bare ws socket and answering 201, and one before answering each ack — the two commits of a push round trip and nothing else; the push goal of ${PUSH_P99_GOAL_MS} ms p99 is reachable only if this floor is well below it`,
      `push_max_rate_per_s / durable_push_floor_max_rate_per_s: the highest offered rate, in steps doubling from the ${s.rate}/s offered (halving from it, down to ${PUSH_MIN_SEARCH_RATE}/s, when that one misses), that completes ≥ 99 % of the rate with round-trip p99 ≤ ${PUSH_P99_GOAL_MS} ms (0: none did), each step at least 2,000 commands; their ratio is the share of the floor's capacity at that latency the gateway keeps, which unlike a fixed rate carries over between machines; each step searched is noted with its p50, p99 and CPU per command (of the server process and of PostgreSQL, its warm-up round included): a machine that runs code slower when it comes to it cold — as it does between commands far apart — makes a command cost more CPU at a low rate than at a high one, and a server that runs more code per command pays more of that`,
      `command_rows_push_floor_*: the durable push floor's server and transports, its two commits made by the gateway's own statements instead of one bare row each — the creation (the device row share-locked, the command created DELIVERED with its COMMAND_CREATED and COMMAND_DELIVERED audit rows) and the ack (the command locked and updated EXECUTED with its audit row), each a group of one, from a pool of ${GATEWAY_POOL} — and nothing else of Saffron (no fastify, authentication, validation, approval gate, command signature or session); its highest rate is searched as the others'; command_rows_floor_max_rate_vs_durable_floor is what the rows the guarantees write (each change audited in its transaction, the device locked against deletion) leave of the bare floor's capacity at ${PUSH_P99_GOAL_MS} ms, and push_max_rate_vs_command_rows_floor what the gateway's own work around those statements leaves of that`,
      `grouped_rows_push_floor_*: the command rows floor with its creations and acks written through the gateway's own group commit (gateway/link/commandGroups.ts: what arrives while a group is written goes together in the next, one statement per group and kind, one group of each in flight) instead of one statement per command — the gateway's statements and their grouping on the bare transports, nothing else of Saffron; push_rtt_p99_vs_grouped_rows_floor and push_max_rate_vs_grouped_rows_floor are what the gateway's own code (fastify, authentication, validation, approval gate, command signature, session) costs the push beside the same writes; *_db_statements_per_push: statements the floor server sent per command completed, as the gateway's are counted`,
      "handshake_floor_*: the same clients and connections against a bare ws server (no fastify, no database) doing only the device protocol's work: verify the signed upgrade with the device's secret, send a random challenge, verify the hello's proof (same runtime/crypto functions), answer a welcome of the gateway's shape — what a connect costs before anything of Saffron (admission, authentication's caches, rate limits, sessions, presence, delivery)",
      "durable_handshake_floor_*: the handshake floor plus the database work of a device's first handshake with a gateway that reads each device's row as it arrives (the gateway reads the devices most recently seen ahead as it starts, and so skips most of those reads), and nothing else of Saffron: the device's row read before its signature is checked (its sealed secrets and whether commands wait for it; reads arriving together share one statement, one in flight at a time, after a 2 ms gather, as the gateway's credential reads), and the device recorded ONLINE with its last_seen once proven (OFFLINE when it goes), written behind every 250 ms in one statement — no actor snapshot, webhook event, admission, rate limit or delivery; durable_handshake_floor_vs_raw_ws is how much of the goal's baseline a durable gateway that reads each device as it arrives can reach on this machine, and connects_vs_durable_handshake_floor how Saffron compares with it",
      'connect_cpu_ms_* / raw_ws_connect_cpu_ms_* / handshake_floor_connect_cpu_ms_* / durable_handshake_floor_connect_cpu_ms_*: CPU time per connection over the connect span of the server process, of the client processes (the load generator: signing the upgrade and answering the challenge for Saffron and the handshake floor) and of PostgreSQL (from /proc, Linux only); on 2 cores the clients share the machine with the server',
      `idle_event_loop_delay_* / raw_ws_idle_event_loop_delay_*: p99 and longest gap between the ticks of a 5 ms timer in the server process (monitorEventLoopDelay; about 5 ms while its event loop is free, a stall of X ms shows as about X + 5) while it held the idle connections ${IDLE_HOLD_MS / 1000} s with nothing else going on — one heartbeat interval of the gateway's and a second: its own periodic work over all its sessions, against a bare ws server holding as many`,
      'push_event_loop_delay_* / durable_push_floor_event_loop_delay_*: the same gaps over the push measurement at the offered rate, warm-up round included — a collection or a long synchronous pass holds every push in flight that long',
      `push_fleet_held_*: the push measurement (same rate, commands and ${PUSH_DEVICES} device sockets, its own warm-up round) run once more while the gateway still holds the idle connections, after their hold and before they close — the case of a gateway in service, whose heap, heartbeats and presence writes the push shares (push_fleet_held_cpu_ms_*: per command, warm-up round included, of the gateway, of PostgreSQL and of the client processes holding the idle connections); push_rtt_* and push_max_rate_per_s stay measured with the idle connections closed, as before, so their series carries on; durable_push_floor_fleet_held_*: the durable floor's push measured the same way, after the same hold, while the floor server holds as many idle device sockets (the same clients and handshake as the handshake floor; the protocol's heartbeats — each socket visited once per 30 s by a shared timer wheel and sent a heartbeat frame when quiet for half of that, which the device answers — and no presence) — what holding a fleet costs a push with nothing of Saffron`,
      `idle_cpu_share_* / durable_push_floor_idle_cpu_share_*: the share of one core used over the ${IDLE_HOLD_MS / 1000} s hold of the idle connections by the server process (gateway / server), by the client processes holding them (fleet) and by PostgreSQL (from /proc, Linux only): what a held fleet costs with nothing else going on, mostly its heartbeats (about connections ÷ 30 s frames each way); the durable floor's is the protocol's heartbeats alone`,
      'push_cpu_ms_* / durable_push_floor_cpu_ms_*: CPU time per command of the server process and of every PostgreSQL process (from /proc, Linux only) over the push measurement, warm-up round included: what a push costs the machine, against the floor doing only its two commits',
      'saf_records_per_s: records newly stored per second of upload time; raw_batch_insert_rows_per_s: equivalent rows by multi-row INSERT of 500, autocommit, same batches in flight',
      'config_304_per_s: device-signed polls answered 304 per second',
      'pg_notify_commits_per_s_c8: one-row write transactions per second with a pg_notify in each (a listener connected), 8 connections, against the same without (pg_commits_per_s_c8), alternating rounds: the ceiling NOTIFY puts on pushes routed across gateways (one NOTIFY per command-creating transaction)',
      'db_statements_per_*: SQL statements the gateway process sent to PostgreSQL (counted at pg.Client#query: BEGIN/COMMIT, background sweeps and the LISTEN connection included) during the part, divided by its connections held, polls answered or commands completed',
      `goal: ≥ ${CONNECTIONS_GOAL} idle connections — ${held.held >= CONNECTIONS_GOAL ? 'met' : 'NOT met'} (${held.held})`,
      `goal: SAF ≥ ${SAF_GOAL} of raw batched inserts — ${(result.ratios.saf_vs_raw_batch_insert ?? 0) >= SAF_GOAL ? 'met' : 'NOT met'} (${result.ratios.saf_vs_raw_batch_insert})`,
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanUp();
  }
  return result;
}
