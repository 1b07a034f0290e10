/**
 * bench engine: durable workflows/s and steps/s of a 5-step STANDARD workflow at concurrency
 * 1 and 32, with p50/p99 step latency (step start to its commit), on PostgreSQL (when
 * DATABASE_URL is set) and SQLite; and, in the same run, the raw commit rate of the same
 * database at the same concurrency (one single-row INSERT per transaction). The ratio
 * steps/s ÷ raw commits/s says how close the engine gets to the database's own limit.
 *
 * A step writes far more than a raw commit's one small row, so on PostgreSQL the same run also
 * measures a floor (engine/floor.ts): the rows the engine writes per workflow — its row
 * inserted, then updated once per step with its state and actor snapshot; 7 audit rows, 5
 * metric rows, a heartbeat inserted and deleted — written by hand in the same tables, in the
 * engine's 6 statements per workflow (grouped 16 workflows to a statement at 32, as the
 * engine's group commit does). Steps/s ÷ floor steps/s is the engine's own share.
 *
 * Each part also reports the CPU it costs per step or per raw commit — this process's and
 * every PostgreSQL process's (from /proc, Linux only) — since on a disk whose commits are
 * cheap the ratio is set by CPU, not by the commit: `…_cpu_ms_per_step_c…` against
 * `…_floor_cpu_ms_per_step_c…` and `…_raw_cpu_ms_per_commit_c…`.
 *
 * Each concurrency is measured in `--rounds` rounds (3), each running raw commits, the engine
 * and the floor once, 8 s each (× `--scale`). This machine's speed drifts over minutes: three
 * runs within a quarter of an hour (November 30th, 2026) had c1 ratios to raw commits of 0.21,
 * 0.20 and 0.27. In rounds a slow spell falls on neighbouring parts instead of on one part's
 * only measurement. Figures are medians over the rounds, and each ratio is the median of the
 * rounds' own ratios.
 *
 *   npm run bench -- engine [--json] [--scale X] [--rounds 3]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createRuntime } from '../actors/index.js';
import { migrations } from '../migrations/index.js';
import {
  ensureEdgeSchema,
  loadDefinition,
  migrate,
  openStore,
  type Store,
} from '../runtime/index.js';
import { cpuBetween, readCpu } from './cpu.js';
import {
  BATCH as FLOOR_BATCH,
  type EngineFloor,
  IN_FLIGHT as FLOOR_IN_FLIGHT,
  openEngineFloor,
} from './engine/floor.js';
import {
  type BenchFigures,
  type BenchOptions,
  type BenchResult,
  medians,
  percentile,
  round,
} from './harness.js';

const FLAGS = ['scale', 'rounds'];
/** Rounds of each concurrency's parts (see the module comment). */
const ROUNDS = 3;
const STEPS = 5;
const WORKFLOW_TYPE = 'bench_five_steps';
/** Seconds of workflows run before the measured parts, so that the tables hold rows. */
const WARM_UP_SECONDS = 3;
/** The tables a step writes, analyzed after the warm-up. */
const WORKFLOW_TABLES = [
  'workflow_executions',
  'workflow_audit_log',
  'workflow_metrics',
  'workflow_heartbeats',
];

/**
 * Run `work` and return its result with the CPU milliseconds it cost: this process's, and
 * PostgreSQL's (null off Linux).
 */
async function withCpu<T>(
  work: () => Promise<T>,
): Promise<{ result: T; processMs: number; postgresMs: number | null }> {
  const before = readCpu([]);
  const own = process.cpuUsage();
  const result = await work();
  const spent = process.cpuUsage(own);
  const after = readCpu([]);
  return {
    result,
    processMs: (spent.user + spent.system) / 1000,
    postgresMs: before && after ? 1000 * cpuBetween(before, after).serverSeconds : null,
  };
}

async function rawCommits(store: Store, concurrency: number, seconds: number): Promise<number> {
  const driver = store.driver;
  const table = 'bench_raw_commits';
  const create = `CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, payload TEXT NOT NULL)`;
  const insert = `INSERT INTO ${table} (id, payload) VALUES ($1, $2)`;
  let one: () => unknown;
  if (driver.dialect === 'postgres') {
    await driver.pool.query(create);
    one = () =>
      driver.pool.query({
        name: 'bench_raw_commit',
        text: insert,
        values: [randomUUID(), '{"step":1}'],
      });
  } else if (driver.dialect === 'sqlite') {
    driver.database.exec(create);
    const statement = driver.database.prepare(insert.replace(/\$\d/g, '?'));
    one = () => statement.run(randomUUID(), '{"step":1}');
  } else {
    await driver.pglite.exec(create);
    one = () => driver.pglite.query(insert, [randomUUID(), '{"step":1}']);
  }
  let count = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await one();
        count++;
      }
    }),
  );
  return count / seconds;
}

async function engineRun(store: Store, stepsRoot: string, concurrency: number, seconds: number) {
  const latencies: number[] = [];
  const started = new Map<string, number>();
  const runtime = createRuntime({
    store,
    stepsRoot,
    faults: (point, at) => {
      const key = `${at.workflowId}:${at.stepName}`;
      if (point === 'before-step') started.set(key, performance.now());
      else if (point === 'after-commit') {
        const t0 = started.get(key);
        if (t0 !== undefined) latencies.push(performance.now() - t0);
        started.delete(key);
      }
    },
  });
  await runtime.registry.registerFile(join(stepsRoot, 'bench.yaml'), stepsRoot);
  let workflows = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      let i = 0;
      while (performance.now() < deadline) {
        const wf = await runtime.start(WORKFLOW_TYPE, { worker, i: i++ });
        if (wf.status !== 'COMPLETED') throw new Error(`bench workflow ended ${wf.status}`);
        workflows++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  await runtime.close();
  latencies.sort((a, b) => a - b);
  return {
    workflowsPerS: workflows / elapsed,
    stepsPerS: (workflows * STEPS) / elapsed,
    elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

function writeSteps(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'bench.js'),
    'export const step = (state, context) => ({ [context.stepName]: (state.i ?? 0) + 1 });\n',
  );
  const steps = Array.from(
    { length: STEPS },
    (_, i) => `  - { name: s${i + 1}, type: STANDARD, function: bench.step }`,
  ).join('\n');
  writeFileSync(
    join(dir, 'bench.yaml'),
    `workflow_type: ${WORKFLOW_TYPE}\nautomate_next: true\nsteps:\n${steps}\n`,
  );
}

/** One round of parts at one concurrency (see {@link measureRound}). */
interface Round {
  store: Store;
  /** The floor, on PostgreSQL. */
  floor: EngineFloor | undefined;
  stepsRoot: string;
  prefix: 'pg' | 'sqlite';
  c: number;
  seconds: number;
  /** How progress names the round. */
  label: string;
  progress: (message: string) => void;
}

/**
 * One round at concurrency `c`: raw commits, the engine, and on PostgreSQL the floor, one
 * after another for `seconds` each, their figures into `pass`.
 */
async function measureRound(
  { store, floor, stepsRoot, prefix, c, seconds, label, progress }: Round,
  pass: BenchFigures,
): Promise<void> {
  progress(`${label}: raw commits for ${seconds}s`);
  const rawRun = await withCpu(() => rawCommits(store, c, seconds));
  const raw = rawRun.result;
  progress(`${label}: engine for ${seconds}s`);
  const engine = await withCpu(() => engineRun(store, stepsRoot, c, seconds));
  const e = engine.result;
  progress(
    `  raw ${Math.round(raw)}/s, engine ${Math.round(e.stepsPerS)} steps/s (${Math.round(e.workflowsPerS)} workflows/s), p50 ${e.p50.toFixed(2)} ms, p99 ${e.p99.toFixed(2)} ms`,
  );
  const p = `${prefix}_`;
  pass.metrics[`${p}workflows_per_s_c${c}`] = round(e.workflowsPerS);
  pass.metrics[`${p}steps_per_s_c${c}`] = round(e.stepsPerS);
  pass.metrics[`${p}step_p50_ms_c${c}`] = round(e.p50);
  pass.metrics[`${p}step_p99_ms_c${c}`] = round(e.p99);
  pass.baselines[`${p}raw_commits_per_s_c${c}`] = round(raw);
  pass.ratios[`${p}steps_vs_raw_c${c}`] = round(e.stepsPerS / raw);
  // CPU per item: this process's plus PostgreSQL's (only the process's on SQLite)
  const perItem = (run: { processMs: number; postgresMs: number | null }, n: number) =>
    round((run.processMs + (prefix === 'pg' ? (run.postgresMs ?? 0) : 0)) / n);
  const steps = e.stepsPerS * e.elapsed;
  pass.metrics[`${p}cpu_ms_per_step_c${c}`] = perItem(engine, steps);
  if (prefix === 'pg' && engine.postgresMs !== null)
    pass.metrics[`${p}postgres_cpu_ms_per_step_c${c}`] = round(engine.postgresMs / steps);
  pass.baselines[`${p}raw_cpu_ms_per_commit_c${c}`] = perItem(rawRun, raw * seconds);
  if (!floor) return;
  progress(`${label}: floor for ${seconds}s`);
  const floorRun = await withCpu(() => floor.run(c, seconds));
  const f = floorRun.result;
  progress(`  floor ${Math.round(f.stepsPerS)} steps/s`);
  const floorSteps = f.stepsPerS * f.elapsed;
  pass.baselines[`${p}floor_steps_per_s_c${c}`] = round(f.stepsPerS);
  pass.baselines[`${p}floor_cpu_ms_per_step_c${c}`] = perItem(floorRun, floorSteps);
  if (floorRun.postgresMs !== null)
    pass.baselines[`${p}floor_postgres_cpu_ms_per_step_c${c}`] = round(
      floorRun.postgresMs / floorSteps,
    );
  pass.ratios[`${p}steps_vs_floor_c${c}`] = round(e.stepsPerS / f.stepsPerS);
}

/** Run the engine benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = {
    bench: 'engine',
    metrics: {},
    baselines: {},
    ratios: {},
    notes: [],
  };
  const unknown = Object.keys(options.flags).filter((f) => !FLAGS.includes(f));
  if (unknown.length) throw new Error(`bench engine: unknown flag(s) --${unknown.join(', --')}`);
  const rounds = options.flags.rounds === undefined ? ROUNDS : Number(options.flags.rounds);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error('bench engine: --rounds must be a whole number ≥ 1');
  const seconds = Math.max(1, 8 * options.scale);
  const dir = mkdtempSync(join(tmpdir(), 'saffron-bench-engine-'));
  const stepsRoot = join(dir, 'steps');
  writeSteps(stepsRoot);
  await loadDefinition(
    'workflow_type: x\nsteps: [{ name: a, type: STANDARD, function: bench.step }]',
    { stepsRoot },
  );
  const url = process.env.DATABASE_URL;
  const targets: { prefix: 'pg' | 'sqlite'; location: string }[] = [
    ...(url ? [{ prefix: 'pg' as const, location: url }] : []),
    { prefix: 'sqlite', location: join(dir, 'edge.db') },
  ];
  if (!url) result.notes.push('DATABASE_URL not set: PostgreSQL not measured');
  result.notes.push(
    '*_cpu_ms_per_step_* / *_raw_cpu_ms_per_commit_*: CPU time of this process plus (PostgreSQL only) every local postgres process, over the part, per step or per raw commit',
  );
  if (url)
    result.notes.push(
      `pg_floor_*: the engine's rows for each ${STEPS}-step workflow written by hand (pg, prepared statements, no Saffron code) in the same schema — creation (workflow row, WORKFLOW_STARTED, heartbeat), then per step the row updated at its version with state and actor snapshot, STEP_EXECUTED and a step_duration_ms metric (the last step: COMPLETED, WORKFLOW_COMPLETED, heartbeat deleted) — in the engine's ${STEPS + 1} statements per workflow; at c32 ${FLOOR_BATCH} workflows to a statement and ${FLOOR_IN_FLIGHT} statements open, as the engine's group commit; generic plans (plan_cache_mode)`,
    );
  try {
    for (const target of targets) {
      const schema = target.prefix === 'pg' ? `saffron_bench_engine_${process.pid}` : undefined;
      const admin = schema ? new pg.Client({ connectionString: url }) : undefined;
      if (admin) {
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
      }
      const store = await openStore(target.location, { postgres: { schema, maxConnections: 32 } });
      let floor: EngineFloor | undefined;
      try {
        if (store.dialect === 'sqlite') await ensureEdgeSchema(store);
        else await migrate(store, migrations);
        if (url && schema)
          floor = await openEngineFloor(url, schema, { workflowType: WORKFLOW_TYPE, steps: STEPS });
        if (admin) {
          // a running system's tables: rows, and statistics (autovacuum's ANALYZE) — plans
          // made on empty tables scan them whole, and a prepared statement keeps its plan
          // while the table grows
          options.progress(`${target.prefix}: warm-up, ${WARM_UP_SECONDS}s at c8, then ANALYZE`);
          await engineRun(store, stepsRoot, 8, WARM_UP_SECONDS);
          await admin.query(`ANALYZE ${WORKFLOW_TABLES.map((t) => `${schema}.${t}`).join(', ')}`);
        }
        for (const c of [1, 32]) {
          const passes: BenchFigures[] = [];
          for (let r = 1; r <= rounds; r++) {
            const pass: BenchFigures = { metrics: {}, baselines: {}, ratios: {} };
            const label =
              rounds > 1 ? `${target.prefix} c${c} round ${r}/${rounds}` : `${target.prefix} c${c}`;
            await measureRound(
              {
                store,
                floor,
                stepsRoot,
                prefix: target.prefix,
                c,
                seconds,
                label,
                progress: options.progress,
              },
              pass,
            );
            passes.push(pass);
          }
          medians(passes, result);
          if (rounds > 1)
            result.notes.push(
              `${target.prefix} c${c}: ${rounds} rounds; figures are medians, ratios the median of each round's own (steps ÷ raw by round: ${passes.map((p) => p.ratios[`${target.prefix}_steps_vs_raw_c${c}`]).join(', ')})`,
            );
        }
      } finally {
        await floor?.close();
        await store.close();
        if (admin) {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await admin.end();
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}
