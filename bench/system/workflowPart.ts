/**
 * Part 1 of the system benchmark: Saffron against DBOS Transact, end to end, with each worker
 * count in turn (Saffron, then DBOS, for each), and the paced latency run with the first
 * worker count. A system that fails (DBOS may not run on every machine) leaves its keys null
 * and its exact error in the notes; the other parts still run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { round, type BenchResult } from '../harness.js';
import { dbosVersion } from './dbos.js';
import { writeSteps } from './flow.js';
import type { SystemSettings } from './settings.js';
import { measureFlows, type FlowContext } from './workflows.js';

/** The ratio goal of Saffron's workflows/s over DBOS's. */
const GOAL = 2;

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  typeof a === 'number' && typeof b === 'number' && b > 0 ? round(a / b) : null;

const message = (error: unknown) =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);

/** Run part 1 into `result`. */
export async function runWorkflowPart(
  s: SystemSettings,
  shared: Omit<
    FlowContext,
    'stepsRoot' | 'concurrency' | 'parallel' | 'warmup' | 'maxSeconds' | 'dbos' | 'enginePool'
  >,
  result: BenchResult,
): Promise<void> {
  const { metrics, baselines, ratios, notes } = result;
  const stepsRoot = mkdtempSync(join(tmpdir(), 'saffron-bench-system-'));
  writeSteps(stepsRoot);
  const ctx: FlowContext = {
    ...shared,
    stepsRoot,
    concurrency: s.concurrency,
    parallel: s.parallel,
    warmup: s.warmup,
    maxSeconds: s.maxSeconds,
    enginePool: 10,
    dbos: {
      queuePollMs: s.dbosQueuePollMs,
      resultPollMs: s.dbosResultPollMs,
      poolSize: s.dbosPool,
    },
  };
  const paced = { count: s.pacedCount, rate: s.pacedRate };
  try {
    for (const [index, workers] of s.workers.entries()) {
      // ABBA order: drift in the shared machine's speed does not always favour the same system
      const order = index % 2 === 0 ? s.systems : [...s.systems].reverse();
      for (const system of order) {
        const into = system === 'saffron' ? metrics : baselines;
        const prefix = system === 'saffron' ? '' : 'dbos_';
        const withPaced = workers === s.workers[0];
        shared.progress(
          `workflows: ${system}, ${workers} worker process(es), ${s.workflows} workflows${withPaced ? `, then ${paced.count} paced at ${paced.rate}/s` : ''}`,
        );
        into[`${prefix}workflows_per_s_${workers}w`] = null;
        try {
          const r = await measureFlows(
            system,
            workers,
            s.workflows,
            ctx,
            withPaced ? paced : undefined,
          );
          into[`${prefix}workflows_per_s_${workers}w`] = round(r.burst.workflowsPerS);
          into[`${prefix}burst_latency_p50_ms_${workers}w`] = round(r.burst.p50);
          into[`${prefix}burst_latency_p99_ms_${workers}w`] = round(r.burst.p99);
          if (r.paced) {
            into[`${prefix}latency_p50_ms`] = round(r.paced.p50);
            into[`${prefix}latency_p99_ms`] = round(r.paced.p99);
          }
        } catch (error) {
          shared.progress(`  ${system} failed: ${message(error)}`);
          notes.push(`${system} with ${workers} worker(s) did not complete: ${message(error)}`);
        }
      }
    }
  } finally {
    rmSync(stepsRoot, { recursive: true, force: true });
  }

  // the headline: the largest worker count measured (2 by default)
  const headline = Math.max(...s.workers);
  metrics.workflows_per_s = metrics[`workflows_per_s_${headline}w`] ?? null;
  metrics.workflows_per_s_workers = headline;
  baselines.dbos_workflows_per_s = baselines[`dbos_workflows_per_s_${headline}w`] ?? null;
  ratios.vs_dbos = ratio(metrics.workflows_per_s, baselines.dbos_workflows_per_s);
  for (const w of s.workers)
    ratios[`vs_dbos_${w}w`] = ratio(
      metrics[`workflows_per_s_${w}w`],
      baselines[`dbos_workflows_per_s_${w}w`],
    );
  ratios.latency_p50_vs_dbos = ratio(metrics.latency_p50_ms, baselines.dbos_latency_p50_ms);
  ratios.latency_p99_vs_dbos = ratio(metrics.latency_p99_ms, baselines.dbos_latency_p99_ms);

  notes.push(
    `workflows: 5 steps (validate, enrich: STANDARD; score: ASYNC; decide, record: STANDARD), trivial bodies shared by both systems; ${s.workflows} workflows per burst after ${s.warmup} warm-up workflows, ${s.parallel} start calls in flight in one engine process; ${s.concurrency} queued steps at once per worker process; workflows_per_s = burst size ÷ (last completion − first start call); metrics.workflows_per_s is the ${headline}-worker figure (metrics.workflows_per_s_workers)`,
    `saffron: engine process = createRuntime({ runTasks: false }) over PostgreSQL (pool 10), start → validate → enrich → ASYNC dispatch before the start call returns; workers = real \`saffron worker --db … --steps … --concurrency ${s.concurrency}\` processes (bin/saffron.js, maintenance on, NOTIFY wake-ups), which run score and then decide and record`,
    `dbos: @dbos-inc/dbos-sdk ${dbosVersion()}; engine process starts each workflow with DBOS.startWorkflow (returns once recorded) and runs it: validate and enrich as DBOS.runStep, score as a child workflow enqueued on a DBOS queue (workerConcurrency ${s.concurrency}, minPollingIntervalMs ${s.dbosQueuePollMs}) awaited with getResult (pollingIntervalMs ${s.dbosResultPollMs}), then decide and record as steps; the engine listens to no queue, worker processes only to that queue; systemDatabasePoolSize ${s.dbosPool} per process; DBOS has no cross-process wake-up for either wait, so both intervals are polling settings`,
    `latency_p50_ms / latency_p99_ms: ${s.pacedCount} workflows started at ${s.pacedRate}/s with ${s.workers[0]} worker process(es), from the start call to the completion timestamp each system writes with its terminal status (Saffron's clock before the commit; DBOS's database now()); burst_latency_*: the same over the burst, including its backlog`,
  );
  if (typeof ratios.vs_dbos === 'number')
    notes.push(
      `goal: Saffron ≥ ${GOAL}× DBOS workflows/s — ${ratios.vs_dbos >= GOAL ? 'met' : 'NOT met'} (${ratios.vs_dbos}× with ${headline} worker process(es))`,
    );
}
