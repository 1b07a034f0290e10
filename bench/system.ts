/**
 * bench system: the whole system under the loads it is meant for, each part against a
 * baseline measured in the same run on the same machine and database.
 *
 * 1. workflows — end-to-end durable workflows on PostgreSQL: a 5-step workflow with one ASYNC
 *    step, started by an engine process and finished by 1 and 2 real `saffron worker`
 *    processes; workflows/s and start → COMPLETED latency p50/p99. Baseline: DBOS Transact
 *    running the equivalent workflow (its queued step a child workflow on a DBOS queue) with
 *    the same processes on the same PostgreSQL (bench/system/dbos.ts).
 * 2. saf — store-and-forward sync from 1,000 registered devices at once, each uploading its
 *    signed records in signed batches to one gateway process; records/s accepted. Baseline:
 *    the same rows by multi-row INSERT through a pool the size of the gateway's.
 * 3. storm — 10,000 devices on WebSocket all dropped at one moment and reconnecting at once;
 *    time until every one is back and the gateway reports it online, and per-device reconnect
 *    time p50/p99. Baseline: the same storm against a bare `ws` server.
 *
 * Results go to stdout as usual and to `bench/results/system.json` and `.md` (`--out PREFIX`,
 * `--out none`). Every part runs in schemas of its own (dropped afterwards, also on failure or
 * Ctrl-C) on DATABASE_URL (default postgres://root@127.0.0.1:5432/test).
 *
 *   npm run bench -- system [--json] [--scale X] [--parts workflows,saf,storm]
 *     [--systems saffron,dbos] [--workflows 1000] [--workers 1,2] [--concurrency 8]
 *     [--parallel 32] [--warmup 100] [--paced-count 200] [--paced-rate 20] [--max-seconds 300]
 *     [--dbos-queue-poll-ms 50] [--dbos-result-poll-ms 50] [--dbos-pool 10]
 *     [--saf-devices 1000] [--saf-records 100] [--saf-batch 50]
 *     [--storm-devices 10000] [--storm-jitter-ms 0] [--storm-max-seconds 300]
 *     [--out bench/results/system]
 */
import { cpus, totalmem } from 'node:os';
import pg from 'pg';
import { type BenchOptions, type BenchResult } from './harness.js';
import { benchSchemas } from './queue/schemas.js';
import { writeReport } from './system/report.js';
import { runSafPart } from './system/safPart.js';
import { settingsOf, type Part } from './system/settings.js';
import { runStormPart } from './system/stormPart.js';
import { runWorkflowPart } from './system/workflowPart.js';

async function serverVersion(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ server_version: string }>('SHOW server_version');
  return rows[0]!.server_version;
}

/** When the PostgreSQL server started (changes when something restarts it). */
async function startedAt(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ t: string }>('SELECT pg_postmaster_start_time()::text AS t');
  return rows[0]!.t;
}

/** Run the system benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = {
    bench: 'system',
    metrics: {},
    baselines: {},
    ratios: {},
    notes: [],
  };
  const s = settingsOf(options);
  const { progress } = options;
  const url = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // an idle connection lost (a PostgreSQL restart) is replaced on next use; the query that needs it fails
  pool.on('error', () => undefined);
  const schemas = benchSchemas(url, 'saffron_bench_system');
  const live = new Set<() => void>();
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const kill of live) kill();
      await schemas
        .dropAll()
        .catch((error: unknown) =>
          progress(`system: could not drop every schema: ${String(error)}`),
        );
      await pool.end();
    })());
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`system: ${signal}, killing child processes and dropping schemas`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const began = performance.now();
  try {
    result.notes.push(
      `PostgreSQL ${await serverVersion(pool)} on the same machine, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}; parts: ${s.parts.join(', ')}`,
    );
    const shared = { url, pool, schemas, live, progress };
    const parts: Record<Part, () => Promise<void>> = {
      workflows: () => runWorkflowPart(s, shared, result),
      saf: () => runSafPart(s, shared, result),
      storm: () => runStormPart(s, shared, result),
    };
    // a part that fails (the database restarted under it, a child process died) is reported
    // in the notes; the parts after it still run and the results measured so far are kept
    for (const part of s.parts) {
      const before = await startedAt(pool).catch(() => null);
      try {
        await parts[part]();
      } catch (error) {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
        progress(`${part}: failed: ${text}`);
        result.notes.push(`the ${part} part failed: ${text.split('\n')[0]}`);
      }
      // another process on a shared machine may restart the server: say so next to the figures
      const after = await startedAt(pool).catch(() => null);
      if (before === null || after !== before) {
        progress(`${part}: PostgreSQL restarted during this part`);
        result.notes.push(
          `PostgreSQL was restarted during the ${part} part (by another process): its figures are not valid`,
        );
      }
    }
    result.notes.push(`whole run: ${((performance.now() - began) / 1000).toFixed(0)} s`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanUp();
  }
  if (s.out) {
    const written = await writeReport(s.out, result, s);
    progress(`results written to ${written.join(' and ')}`);
  }
  return result;
}
