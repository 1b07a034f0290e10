/**
 * Part 3 of the system benchmark: a reconnect storm of 10,000 devices against one gateway
 * process (bench/system/storm.ts), then the same storm against a bare `ws` server. The
 * gateway counts a device online when its new session's `dev.connected` has committed: the
 * device row is ONLINE with a `last_seen` after the storm began (the drop's own
 * `dev.disconnected` never leaves a row ONLINE with a fresh `last_seen`: for the current
 * session it sets OFFLINE, for an older one it changes nothing but `last_seen` after the new
 * session is already recorded), and the gateway holds exactly that many sockets. The
 * baseline's storm starts 15 s after the gateway's has ended.
 */
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { round, type BenchResult } from '../harness.js';
import { startChild, type Child } from '../gateway/child.js';
import type { ServerSpec } from '../gateway/server.js';
import { startCloud } from './cloud.js';
import type { SystemSettings } from './settings.js';
import { measureStorm, type StormResult } from './storm.js';
import type { FlowContext } from './workflows.js';

const SERVER = fileURLToPath(new URL('../gateway/server.ts', import.meta.url));
/** The gateway's connection pool. */
const POOL = 10;
/** The pause between the gateway's storm and the baseline's (see where it is taken). */
const SETTLE_MS = 15_000;

const ms = (v: number | null) => (v === null ? 'not back' : `${v.toFixed(0)} ms`);

function describe(r: StormResult, budget: number): string {
  const back =
    r.reconnectAllSeconds === null
      ? `only ${r.reconnected} of ${r.connected} back within ${budget} s`
      : `all back in ${r.reconnectAllSeconds.toFixed(2)} s`;
  const online =
    r.onlineAllSeconds === null
      ? ''
      : `, all reported online after ${r.onlineAllSeconds.toFixed(2)} s`;
  return `${back}${online}; per device p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, max ${ms(r.max)}; ${r.failedAttempts} failed attempts retried (${r.refusedAttempts} of them refused by admission)${r.firstError ? ` (first: ${r.firstError})` : ''}`;
}

const rounded = (v: number | null) => (v === null ? null : round(v));

/** Run part 3 into `result`. */
export async function runStormPart(
  s: SystemSettings,
  shared: Pick<FlowContext, 'url' | 'schemas' | 'live' | 'progress' | 'pool'>,
  result: BenchResult,
): Promise<void> {
  const { progress, pool } = shared;
  const { metrics, baselines, ratios, notes } = result;
  progress(`storm: ${s.stormDevices} devices registered, one gateway process (pool ${POOL})`);
  const cloud = await startCloud({
    url: shared.url,
    schemas: shared.schemas,
    devices: s.stormDevices,
    poolSize: POOL,
    live: shared.live,
  });
  let storm: StormResult;
  try {
    storm = await measureStorm({
      url: cloud.url,
      benchKey: cloud.benchKey,
      devices: s.stormDevices,
      jitterMs: s.stormJitterMs,
      subnet: 11,
      raw: false,
      budgetSeconds: s.stormMaxSeconds,
      allOnline: (since, expected) => allOnline(cloud.gateway, pool, cloud.schema, since, expected),
      live: shared.live,
      progress,
    });
  } finally {
    await cloud.stop();
  }
  progress(`  gateway: ${describe(storm, s.stormMaxSeconds)}`);

  // a storm right after another was slowed by what the first left behind: the bare `ws` storm
  // took 10–14 s when it followed a gateway storm that was over in 5 s, and 3.6–3.7 s 15 s
  // later (2026-11-30, with each client process bound to one address: stormClients.ts); a
  // gateway storm that lasted 30 s or more had left it 3–5 s
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  progress(`storm baseline: the same ${s.stormDevices} devices against a bare ws server`);
  const bare = await startChild(SERVER, { kind: 'raw-ws' } satisfies ServerSpec);
  const kill = () => bare.kill();
  shared.live.add(kill);
  let raw: StormResult;
  try {
    raw = await measureStorm({
      url: bare.ready.url as string,
      benchKey: cloud.benchKey,
      devices: s.stormDevices,
      jitterMs: s.stormJitterMs,
      subnet: 12,
      raw: true,
      budgetSeconds: s.stormMaxSeconds,
      live: shared.live,
      progress,
    });
  } finally {
    kill();
    shared.live.delete(kill);
  }
  progress(`  bare ws: ${describe(raw, s.stormMaxSeconds)}`);

  metrics.storm_devices = storm.connected;
  metrics.storm_reconnected = storm.reconnected;
  metrics.storm_reconnect_all_seconds = rounded(storm.reconnectAllSeconds);
  metrics.storm_online_all_seconds = rounded(storm.onlineAllSeconds);
  metrics.storm_reconnect_p50_ms = rounded(storm.p50);
  metrics.storm_reconnect_p99_ms = rounded(storm.p99);
  metrics.storm_failed_attempts = storm.failedAttempts;
  metrics.storm_admission_refusals = storm.refusedAttempts;
  metrics.storm_initial_connect_seconds = round(storm.initialConnectSeconds);
  baselines.raw_ws_storm_reconnect_all_seconds = rounded(raw.reconnectAllSeconds);
  baselines.raw_ws_storm_reconnect_p50_ms = rounded(raw.p50);
  baselines.raw_ws_storm_reconnect_p99_ms = rounded(raw.p99);
  baselines.raw_ws_storm_failed_attempts = raw.failedAttempts;
  const ratio = (a: number | null, b: number | null) =>
    a !== null && b !== null && b > 0 ? round(a / b) : null;
  ratios.storm_vs_raw_ws = ratio(storm.reconnectAllSeconds, raw.reconnectAllSeconds);
  ratios.storm_p99_vs_raw_ws = ratio(storm.p99, raw.p99);
  if (storm.reconnected < storm.connected)
    notes.push(
      `storm: ${storm.connected - storm.reconnected} of ${storm.connected} devices were not back within --storm-max-seconds ${s.stormMaxSeconds}: the all-back time and the percentiles they decide are null`,
    );
  if (storm.connected < s.stormDevices)
    notes.push(
      `storm: only ${storm.connected} of ${s.stormDevices} devices connected before the storm`,
    );
  notes.push(
    `storm: ${storm.connected} devices over WebSocket from ${Math.ceil(s.stormDevices / 2500)} client processes (50 loopback addresses each) to one gateway process (pool ${POOL}); each device connects as the edge agent does (signed upgrade, the challenge answered in its hello, counts once the welcome arrives); all sockets terminated at one moment, then every device reconnects ${s.stormJitterMs > 0 ? `at a random moment within ${s.stormJitterMs} ms` : 'at once (no jitter: the worst case; the agent itself waits 0.5–1 s)'}, a failed attempt retried after the agent's backoff (1 s doubling, half random; 15 s connect timeout), or, when the gateway refused the upgrade by admission (503 GATEWAY_BUSY, at most 200 handshakes in progress), after its Retry-After plus up to 1 s at random, without growing the backoff; storm_reconnect_all_seconds: first drop → last welcome; storm_online_all_seconds: storm ordered → the gateway holds every socket and every device row is ONLINE with last_seen after the storm began (polled every 100 ms); storm_reconnect_p50/p99_ms: per device, drop → welcome; baseline: the same storm against a bare ws server (no auth, no database; the echo of the hello stands for the welcome), started ${SETTLE_MS / 1000} s after the gateway's storm ended (right after one, a storm is slowed by what the first left behind)`,
  );
}

/** Does the gateway report `expected` devices reconnected after `since`? */
async function allOnline(
  gateway: Child,
  pool: pg.Pool,
  schema: string,
  since: number,
  expected: number,
): Promise<boolean> {
  if ((await gateway.call<number>({ kind: 'connections' })) !== expected) return false;
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${schema}".edge_devices
      WHERE status = 'ONLINE' AND last_seen >= to_timestamp($1 / 1000.0)`,
    [since],
  );
  return Number(rows[0]?.n ?? 0) >= expected;
}
