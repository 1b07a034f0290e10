/**
 * The two measurements, the same code for every system:
 *
 * - throughput: queue a backlog, ANALYZE the schema's tables (a queue table in use has the
 *   planner statistics autovacuum takes; a fresh one has none, and a plan made for an empty
 *   table can read the whole backlog on every fetch: graphile-worker's batched fetch ran at
 *   half to two-thirds of its speed for want of them), start worker processes, let them go all at
 *   once and time until the database shows no unfinished task (or the time cap passes). Two
 *   figures:
 *   - steady state (the headline): from the moment the first {@link WARMUP_SHARE} of the
 *     backlog is finished until the end, tasks finished in that span ÷ its length. Worker
 *     processes are fresh, and a fresh Node process spends its first seconds compiling its
 *     hot code (a `perf` profile of 4 Saffron workers: V8's optimizing compiler took 11% of
 *     the machine in the first 4 s, 2.6% by the third), which a worker that has been running
 *     for hours does not; the same share is left out for every system.
 *   - cold: from the first task body's start to the end, warm-up included. Starting at the
 *     first body start leaves each system's own start-up (connecting, LISTEN) out.
 * - latency: one idle worker process; tasks queued one by one at a steady rate well below
 *   every system's capacity, so each sample measures the wake-up path, not a backlog: from
 *   the moment the enqueuer sees its commit succeed to the moment the body starts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from '../harness.js';
import { cpuBetween, readCpu, type CpuReading } from '../cpu.js';
import type { Schemas } from './schemas.js';
import {
  wallClock,
  type Enqueued,
  type QueueConfig,
  type QueueHandle,
  type QueueSystem,
} from './system.js';
import { startFleet, type Fleet } from './workers.js';

/** What every measurement of one run shares. */
export interface QueueBench {
  url: string;
  stepsRoot: string;
  concurrency: number;
  schemas: Schemas;
  /** Worker processes running now (killed by the signal handler). */
  fleets: Set<Fleet>;
}

/** A throughput measurement. */
export interface Throughput {
  /** Steady state: after the warm-up share of the backlog (undefined if the cap came first). */
  steady?: Span;
  /** From the first body start, warm-up included. */
  cold: Span;
  capped: boolean;
}

/** Tasks finished in a span of time. */
export interface Span {
  tasksPerS: number;
  tasks: number;
  seconds: number;
  /** CPU milliseconds per task finished in the span (steady state, on Linux only). */
  cpuMsPerTask?: { workers: number; server: number };
}

/** A latency measurement, in milliseconds. */
export interface Latency {
  p50: number;
  p99: number;
  max: number;
  samples: number;
}

/** How often the benchmark asks the database how many tasks are left. */
const POLL_MS = 20;
/** Share of a throughput backlog that warms the worker processes up before the steady-state clock starts. */
export const WARMUP_SHARE = 0.2;
/** Time for an idle worker to reach its wait before latency samples are queued. */
const SETTLE_MS = 1000;
/** Samples queued and discarded before latency is measured (connections, JIT, prepared plans). */
export const WARMUP_SAMPLES = 10;
/** Longest wait for the last latency samples to run. */
const DRAIN_TIMEOUT_MS = 30_000;

/** Run `fn` on `system` installed in a fresh schema; close and drop it afterwards. */
async function withQueue<T>(
  bench: QueueBench,
  system: QueueSystem,
  fn: (queue: QueueHandle, config: QueueConfig) => Promise<T>,
): Promise<T> {
  const schema = await bench.schemas.create();
  try {
    const config = {
      url: bench.url,
      schema,
      concurrency: bench.concurrency,
      stepsRoot: bench.stepsRoot,
    };
    const queue = await system.open(config);
    try {
      return await fn(queue, config);
    } finally {
      await queue.close();
    }
  } finally {
    await bench.schemas.drop(schema);
  }
}

async function expectNoFailures(system: QueueSystem, queue: QueueHandle): Promise<void> {
  const failed = await queue.failed();
  if (failed > 0) throw new Error(`${system.name}: ${failed} task(s) failed`);
}

const span = (tasks: number, ms: number): Span => ({
  tasksPerS: ms > 0 ? tasks / (ms / 1000) : 0,
  tasks,
  seconds: ms / 1000,
});

/** Tasks/s of `processes` worker processes draining a backlog of `tasks`. */
export function throughput(
  bench: QueueBench,
  system: QueueSystem,
  processes: number,
  tasks: number,
  maxSeconds: number,
): Promise<Throughput> {
  return withQueue(bench, system, async (queue, config) => {
    // the processes start up while the backlog is queued; neither is timed
    const starting = startFleet(system.name, config, processes, bench.fleets);
    void starting.catch(() => undefined); // a failed start is thrown where it is awaited
    try {
      await queue.fill(tasks);
      await bench.schemas.analyze(config.schema);
    } catch (error) {
      void starting.then(
        (f) => f.kill(),
        () => undefined,
      );
      throw error;
    }
    const fleet = await starting;
    try {
      const goAt = wallClock();
      fleet.go();
      const warmedUpAt = tasks - Math.ceil(tasks * WARMUP_SHARE);
      let left = tasks;
      let endAt = goAt;
      let warm: { at: number; left: number; cpu: CpuReading | undefined } | undefined;
      while (left > 0 && endAt - goAt < maxSeconds * 1000) {
        await sleep(POLL_MS);
        fleet.check();
        left = await queue.unfinished();
        endAt = wallClock();
        if (!warm && left <= warmedUpAt) warm = { at: endAt, left, cpu: readCpu(fleet.pids) };
      }
      // read while the workers' connections are still open (they are idle once the queue is empty)
      const cpuAtEnd = warm?.cpu && readCpu(fleet.pids);
      const starts = await fleet.stop();
      await expectNoFailures(system, queue);
      if (left === 0) await queue.verify?.();
      let first = endAt;
      for (const t of starts.values()) first = Math.min(first, t);
      const cold = span(tasks - left, endAt - first);
      const steady = warm && warm.at < endAt ? span(warm.left - left, endAt - warm.at) : undefined;
      if (steady && steady.tasks > 0 && warm?.cpu && cpuAtEnd) {
        const spent = cpuBetween(warm.cpu, cpuAtEnd);
        steady.cpuMsPerTask = {
          workers: (spent.workerSeconds * 1000) / steady.tasks,
          server: (spent.serverSeconds * 1000) / steady.tasks,
        };
      }
      return { ...(steady ? { steady } : {}), cold, capped: left > 0 };
    } finally {
      fleet.kill();
    }
  });
}

/** Enqueue-to-start latency of one idle worker process, `samples` tasks queued `rate` per second. */
export function latency(
  bench: QueueBench,
  system: QueueSystem,
  samples: number,
  rate: number,
): Promise<Latency> {
  return withQueue(bench, system, async (queue, config) => {
    const fleet = await startFleet(system.name, config, 1, bench.fleets);
    try {
      fleet.go();
      await sleep(SETTLE_MS);
      const measured: Enqueued[] = [];
      const queued: Promise<void>[] = [];
      let enqueueError: Error | undefined;
      const t0 = performance.now();
      for (let k = 0; k < WARMUP_SAMPLES + samples; k++) {
        const wait = t0 + (k * 1000) / rate - performance.now();
        if (wait > 0) await sleep(wait);
        fleet.check();
        queued.push(
          queue.enqueue().then(
            (e) => {
              if (k >= WARMUP_SAMPLES) measured.push(e);
            },
            (error: unknown) => {
              enqueueError ??= error instanceof Error ? error : new Error(String(error));
            },
          ),
        );
      }
      await Promise.all(queued);
      if (enqueueError) throw enqueueError;
      const deadline = performance.now() + DRAIN_TIMEOUT_MS;
      while ((await queue.unfinished()) > 0) {
        if (performance.now() > deadline) throw new Error(`${system.name}: samples still queued`);
        fleet.check();
        await sleep(POLL_MS);
      }
      const starts = await fleet.stop();
      await expectNoFailures(system, queue);
      const latencies = measured
        .map((e) => {
          const started = starts.get(e.key);
          if (started === undefined) throw new Error(`${system.name}: task ${e.key} never started`);
          return started - e.committedAt;
        })
        .sort((a, b) => a - b);
      return {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? 0,
        samples: latencies.length,
      };
    } finally {
      fleet.kill();
    }
  });
}
