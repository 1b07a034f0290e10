/**
 * bench queue: Saffron's `tasks` queue on PostgreSQL against pg-boss and graphile-worker on
 * the same database in the same run (each system in its own schema, dropped afterwards):
 * claim+complete throughput with 1 and 4 worker processes, and enqueue-to-start latency
 * p50/p99 of an idle worker woken by each system's best mechanism. Ratios are Saffron ÷ the
 * faster peer (throughput: higher is better; latency: lower is better).
 *
 *   npm run bench -- queue [--json] [--tasks 5000] [--samples 300] [--rate 12]
 *     [--max-seconds 10] [--concurrency 8] [--processes 1,4] [--systems saffron,graphile]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type BenchOptions, type BenchResult, round } from './harness.js';
import { latency, throughput, WARMUP_SAMPLES, type QueueBench } from './queue/measure.js';
import { STEP_MODULE } from './queue/saffron.js';
import { benchSchemas } from './queue/schemas.js';
import { PEERS, SYSTEMS } from './queue/systems.js';
import type { QueueSystem } from './queue/system.js';

const FLAGS = [
  'scale',
  'tasks',
  'samples',
  'rate',
  'max-seconds',
  'concurrency',
  'processes',
  'systems',
];
/** The throughput Saffron should reach, as a multiple of the faster peer's. */
const GOAL = 1.5;

interface Settings {
  tasks: number;
  samples: number;
  rate: number;
  maxSeconds: number;
  concurrency: number;
  processes: number[];
  systems: QueueSystem[];
}

function settingsOf(options: BenchOptions): Settings {
  const unknown = Object.keys(options.flags).filter((f) => !FLAGS.includes(f));
  if (unknown.length) throw new Error(`bench queue: unknown flag(s) --${unknown.join(', --')}`);
  const number = (flag: string, fallback: number) => {
    const value = options.flags[flag] === undefined ? fallback : Number(options.flags[flag]);
    if (!(value > 0)) throw new Error(`bench queue: --${flag} must be a positive number`);
    return value;
  };
  const names = options.flags.systems?.split(',') ?? SYSTEMS.map((s) => s.name);
  const systems = SYSTEMS.filter((s) => names.includes(s.name));
  if (systems.length !== names.length)
    throw new Error(`bench queue: --systems takes ${SYSTEMS.map((s) => s.name).join(', ')}`);
  return {
    tasks: Math.max(50, Math.round(number('tasks', 5000) * options.scale)),
    samples: Math.max(20, Math.round(number('samples', 300) * options.scale)),
    rate: number('rate', 12),
    maxSeconds: number('max-seconds', 10),
    concurrency: Math.round(number('concurrency', 8)),
    processes: (options.flags.processes ?? '1,4').split(',').map((p) => {
      const n = Number(p);
      if (!Number.isInteger(n) || n <= 0)
        throw new Error('bench queue: --processes takes e.g. 1,4');
      return n;
    }),
    systems,
  };
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]!.server_version;
  } finally {
    await client.end();
  }
}

const elapsed = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

const isSaffron = (s: QueueSystem) => !PEERS.includes(s);

/** Saffron's figure ÷ the best peer figure (`better` picks it), or null when either is missing. */
function ratio(
  result: BenchResult,
  saffronKey: string,
  peerKey: (peer: string) => string,
  better: (...values: number[]) => number,
): number | null {
  const mine = result.metrics[saffronKey];
  const peers = PEERS.map((p) => result.baselines[peerKey(p.name)]).filter(
    (v): v is number => typeof v === 'number' && v > 0,
  );
  return typeof mine === 'number' && peers.length > 0 ? round(mine / better(...peers)) : null;
}

async function measureAll(
  bench: QueueBench,
  s: Settings,
  result: BenchResult,
  progress: (m: string) => void,
): Promise<void> {
  const section = (system: QueueSystem) => (isSaffron(system) ? result.metrics : result.baselines);
  for (const processes of s.processes) {
    for (const system of s.systems) {
      progress(`${system.name}: throughput, ${s.tasks} tasks, ${processes} worker process(es)`);
      const began = performance.now();
      const t = await throughput(bench, system, processes, s.tasks, s.maxSeconds);
      progress(
        `  ${Math.round(t.tasksPerS)} tasks/s (${t.finished} tasks in ${t.seconds.toFixed(2)} s${t.capped ? ', time cap reached' : ''}; ${elapsed(began)} with set-up)`,
      );
      section(system)[`${system.name}_tasks_per_s_p${processes}`] = round(t.tasksPerS);
      if (t.capped)
        result.notes.push(
          `${system.name} with ${processes} process(es) did not drain ${s.tasks} tasks within ${s.maxSeconds} s: rate over the ${t.finished} finished`,
        );
    }
  }
  // the queue-only variant differs from saffron in what it enqueues, not in how a worker wakes
  for (const system of s.systems.filter((x) => x.name !== 'saffron_queue_only')) {
    progress(`${system.name}: latency, ${s.samples} samples at ${s.rate}/s, 1 idle worker process`);
    const began = performance.now();
    const l = await latency(bench, system, s.samples, s.rate);
    progress(
      `  p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms, max ${l.max.toFixed(2)} ms (${elapsed(began)})`,
    );
    section(system)[`${system.name}_latency_p50_ms`] = round(l.p50);
    section(system)[`${system.name}_latency_p99_ms`] = round(l.p99);
  }
}

function addRatios(s: Settings, result: BenchResult): void {
  for (const p of s.processes) {
    for (const mine of ['saffron', 'saffron_queue_only']) {
      result.ratios[`${mine === 'saffron' ? '' : 'queue_only_'}tasks_per_s_p${p}`] = ratio(
        result,
        `${mine}_tasks_per_s_p${p}`,
        (peer) => `${peer}_tasks_per_s_p${p}`,
        Math.max,
      );
    }
  }
  for (const q of ['p50', 'p99'])
    result.ratios[`latency_${q}`] = ratio(
      result,
      `saffron_latency_${q}_ms`,
      (peer) => `${peer}_latency_${q}_ms`,
      Math.min,
    );
  const throughputRatios = s.processes.map((p) => result.ratios[`tasks_per_s_p${p}`]);
  if (throughputRatios.every((r) => typeof r === 'number')) {
    const met = throughputRatios.every((r) => r >= GOAL);
    const each = s.processes.map((p, i) => `${p} process(es): ${throughputRatios[i]}×`);
    result.notes.push(
      `goal: saffron throughput ≥ ${GOAL}× the faster peer — ${met ? 'met' : 'NOT met'} (${each.join(', ')})`,
    );
  }
}

/** Run the queue benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = { bench: 'queue', metrics: {}, baselines: {}, ratios: {}, notes: [] };
  const url = process.env.DATABASE_URL;
  if (!url) {
    result.notes.push('DATABASE_URL not set: the queue benchmark runs on PostgreSQL only');
    return result;
  }
  const s = settingsOf(options);
  const dir = mkdtempSync(join(tmpdir(), 'saffron-bench-queue-'));
  writeFileSync(join(dir, STEP_MODULE.file), STEP_MODULE.source);
  const bench: QueueBench = {
    url,
    stepsRoot: dir,
    concurrency: s.concurrency,
    schemas: benchSchemas(url),
    fleets: new Set(),
  };
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const fleet of bench.fleets) fleet.kill();
      await bench.schemas.dropAll();
      rmSync(dir, { recursive: true, force: true });
    })());
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = true;
    options.progress(`queue: ${signal}, killing workers and dropping schemas`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const require = createRequire(import.meta.url);
    const version = (name: string) =>
      (require(`${name}/package.json`) as { version: string }).version;
    result.notes.push(
      `PostgreSQL ${await serverVersion(url)}, ${cpus().length} cores, Node ${process.versions.node}; pg-boss ${version('pg-boss')}, graphile-worker ${version('graphile-worker')}`,
      `every system: ${s.concurrency} tasks in flight per worker process, trivial task body (returns a small object); throughput from the first body start until no task is unfinished (cap ${s.maxSeconds} s); latency from the enqueuer's commit to the body start, ${s.samples} samples at ${s.rate}/s after ${WARMUP_SAMPLES} warm-up samples, 1 worker process`,
      ...s.systems.map((x) => `${x.name}: ${x.describe(s.concurrency)}`),
      'per task Saffron also, in its completion statement (one per batch, which also claims the next tasks): locks the task, appends a TASK_COMPLETED audit row, checks the task is alone in its group, and (saffron) commits the workflow transition prepared from the workflow row the claim returned (workflow row at the expected version, STEP_EXECUTED and WORKFLOW_COMPLETED audit rows, heartbeat); saffron_queue_only records the task the general way (a transaction that locks and reads its group and workflow)',
    );
    await measureAll(bench, s, result, options.progress);
    addRatios(s, result);
  } catch (error) {
    // after a signal, the failure is the clean-up pulling the schemas away: the handler exits
    if (signalled) await cleanUp().then(() => new Promise<never>(() => undefined));
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanUp();
  }
  return result;
}
