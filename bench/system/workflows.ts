/**
 * End-to-end durable workflows on PostgreSQL, one system and one worker count at a time, in
 * a fresh schema: an engine process (bench/system/engine.ts) starts the workflows and worker
 * processes run the queued step; the benchmark only watches the database.
 *
 * - Burst: `count` workflows started with `parallel` start calls in flight. Throughput is
 *   `count` over the time from the first start call to the last workflow's completion;
 *   the burst's latencies include the wait in the backlog the burst builds.
 * - Paced (optional): workflows started at a steady rate well below capacity, for the
 *   latency of one workflow through an otherwise idle system: start call → completion.
 *
 * A warm-up burst runs first in the same processes (its workflows are not counted), so both
 * systems are measured with loaded code, prepared statements and open connections.
 */
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { migrations } from '../../migrations/index.js';
import { migrate, openStore } from '../../runtime/index.js';
import { percentile } from '../harness.js';
import { startChild, type Call, type Child } from '../gateway/child.js';
import type { Schemas } from '../queue/schemas.js';
import { dbosProbe, saffronProbe, type CompletionProbe } from './completion.js';
import type { DbosConfig } from './dbos.js';
import type { EngineSpec, Starts } from './engine.js';
import { startDbosWorkers, startSaffronWorkers, type WorkerGroup } from './workers.js';

/** The systems compared. */
export const FLOW_SYSTEMS = ['saffron', 'dbos'] as const;
/** One of {@link FLOW_SYSTEMS}. */
export type FlowSystem = (typeof FLOW_SYSTEMS)[number];

/** What every measurement of a run shares. */
export interface FlowContext {
  url: string;
  stepsRoot: string;
  /** Queued steps run at once per worker process (both systems). */
  concurrency: number;
  /** Start calls in flight in the engine process during a burst. */
  parallel: number;
  /** Workflows of the warm-up burst. */
  warmup: number;
  /** Longest wait for a burst to finish. */
  maxSeconds: number;
  /** Connection pool of Saffron's engine process. */
  enginePool: number;
  /** DBOS settings (polling intervals, pool size) beyond the shared ones. */
  dbos: Pick<DbosConfig, 'queuePollMs' | 'resultPollMs' | 'poolSize'>;
  schemas: Schemas;
  /** Connections the benchmark reads progress through. */
  pool: pg.Pool;
  /** Kill functions of what is running now (for a signal handler). */
  live: Set<() => void>;
  progress: (message: string) => void;
}

/** Throughput and latency of a burst. */
export interface BurstResult {
  count: number;
  seconds: number;
  workflowsPerS: number;
  p50: number;
  p99: number;
}

/** Latency of paced workflows. */
export interface PacedResult {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const ENGINE = fileURLToPath(new URL('./engine.ts', import.meta.url));
const POLL_MS = 100;
const CHECK_EVERY_MS = 2000;

/** `url` with `schema` as the search path: how `saffron worker --db` names a schema. */
function locationOf(url: string, schema: string): string {
  const location = new URL(url);
  location.searchParams.set('options', `-c search_path=${schema}`);
  return location.toString();
}

async function migrateSaffron(url: string, schema: string): Promise<void> {
  const store = await openStore(url, { postgres: { schema, maxConnections: 2 } });
  try {
    const failed = (await migrate(store, migrations)).find((r) => r.status === 'failed');
    if (failed) throw failed.error ?? new Error(`migration ${failed.id} failed`);
  } finally {
    await store.close();
  }
}

/** Wait until `expected` workflows completed; fail on a failed workflow, a dead worker or the time cap. */
async function waitForAll(
  probe: CompletionProbe,
  expected: number,
  workers: WorkerGroup,
  maxSeconds: number,
): Promise<void> {
  const deadline = performance.now() + maxSeconds * 1000;
  let checkedAt = performance.now();
  for (;;) {
    const { done, failed } = await probe.progress();
    if (failed > 0) throw new Error(`${failed} workflow(s) failed`);
    if (done >= expected) return;
    if (performance.now() > deadline)
      throw new Error(`only ${done} of ${expected} workflows completed within ${maxSeconds} s`);
    if (performance.now() - checkedAt > CHECK_EVERY_MS) {
      await workers.check();
      checkedAt = performance.now();
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Each started workflow's latency (completion − start call), ascending, and the span covered. */
function latencies(starts: Starts, done: Map<string, number>) {
  let first = Infinity;
  let last = -Infinity;
  const values = starts.map(([id, startedAt]) => {
    const at = done.get(id);
    if (at === undefined) throw new Error(`workflow ${id} has no completion time`);
    first = Math.min(first, startedAt);
    last = Math.max(last, at);
    return at - startedAt;
  });
  values.sort((a, b) => a - b);
  return { values, seconds: (last - first) / 1000 };
}

/**
 * Measure `system` with `workers` worker processes: a burst of `count` workflows, then, when
 * `paced` is given, `paced.count` workflows at `paced.rate` per second.
 */
export async function measureFlows(
  system: FlowSystem,
  workers: number,
  count: number,
  ctx: FlowContext,
  paced?: { count: number; rate: number },
): Promise<{ burst: BurstResult; paced?: PacedResult }> {
  const schema = await ctx.schemas.create();
  let engine: Child | undefined;
  let group: WorkerGroup | undefined;
  const kill = () => {
    group?.kill();
    engine?.kill();
  };
  ctx.live.add(kill);
  try {
    const dbos: DbosConfig = {
      url: ctx.url,
      schema,
      stepsRoot: ctx.stepsRoot,
      concurrency: ctx.concurrency,
      ...ctx.dbos,
    };
    let spec: EngineSpec;
    if (system === 'saffron') {
      await migrateSaffron(ctx.url, schema);
      spec = {
        system,
        url: ctx.url,
        schema,
        stepsRoot: ctx.stepsRoot,
        poolSize: ctx.enginePool,
      };
    } else spec = { system, config: dbos };
    // the engine first: DBOS's creates the system tables and the queue the workers listen to
    engine = await startChild(ENGINE, spec);
    group =
      system === 'saffron'
        ? await startSaffronWorkers(workers, {
            location: locationOf(ctx.url, schema),
            stepsRoot: ctx.stepsRoot,
            concurrency: ctx.concurrency,
          })
        : await startDbosWorkers(workers, dbos);
    const probe =
      system === 'saffron' ? saffronProbe(ctx.pool, schema) : dbosProbe(ctx.pool, schema);
    let expected = 0;
    let startSeconds = 0;
    const run = async (call: Call) => {
      const calling = performance.now();
      const starts = await engine!.call<Starts>(call, ctx.maxSeconds * 1000);
      startSeconds = (performance.now() - calling) / 1000;
      expected += starts.length;
      await waitForAll(probe, expected, group!, ctx.maxSeconds);
      return latencies(starts, await probe.completedAt());
    };
    if (ctx.warmup > 0) await run({ kind: 'burst', count: ctx.warmup, parallel: ctx.parallel });
    const b = await run({ kind: 'burst', count, parallel: ctx.parallel });
    const burst: BurstResult = {
      count,
      seconds: b.seconds,
      workflowsPerS: count / b.seconds,
      p50: percentile(b.values, 50),
      p99: percentile(b.values, 99),
    };
    ctx.progress(
      `  ${system}, ${workers} worker(s): ${Math.round(burst.workflowsPerS)} workflows/s (${count} in ${burst.seconds.toFixed(2)} s, the start calls took ${startSeconds.toFixed(2)} s), latency in the burst p50 ${burst.p50.toFixed(0)} ms, p99 ${burst.p99.toFixed(0)} ms`,
    );
    if (!paced) return { burst };
    const p = await run({ kind: 'paced', count: paced.count, rate: paced.rate });
    const result: PacedResult = {
      count: paced.count,
      p50: percentile(p.values, 50),
      p99: percentile(p.values, 99),
      max: p.values[p.values.length - 1] ?? 0,
    };
    ctx.progress(
      `  ${system}, paced at ${paced.rate}/s: latency p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, max ${result.max.toFixed(1)} ms`,
    );
    return { burst, paced: result };
  } finally {
    await group?.stop().catch(() => group?.kill());
    kill();
    ctx.live.delete(kill);
    await ctx.schemas.drop(schema);
  }
}
