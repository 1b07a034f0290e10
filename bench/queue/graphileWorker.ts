/**
 * graphile-worker under test, in two configurations of `run()` with `concurrency` jobs at once
 * per process, both woken by LISTEN/NOTIFY on `jobs:insert` (its `pollInterval` is only the
 * fallback):
 *
 * - `graphile`: its defaults. Each of the `concurrency` slots locks one job with `get_job`
 *   (SKIP LOCKED) and deletes it with `complete_job` when it succeeds: two statements per job.
 * - `graphile_batched`: its own batching options, as its performance docs introduce them
 *   (https://worker.graphile.org/docs/performance#batching). A local queue
 *   (`localQueue.size`, set to their suggested starting point `concurrency + 1`) fetches and
 *   locks that many jobs in one statement and hands them to the slots as they free up, and
 *   `completeJobBatchDelay: 0` completes the jobs that finish in the same tick in one
 *   statement. A process then holds up to `concurrency` running jobs plus the local queue.
 *   Saffron batches claims and completions by design and pg-boss is run with `batchSize`,
 *   so this is the configuration comparable to theirs.
 */
import {
  Logger,
  makeWorkerUtils,
  run,
  runMigrations,
  type Runner,
  type WorkerUtils,
} from 'graphile-worker';
import { taskBody, wallClock, type QueueConfig, type QueueSystem } from './system.js';

const TASK = 'bench_queue';
/** Fallback poll, the same as Saffron's. */
const POLL_INTERVAL_MS = 1000;
/** Jobs per `addJobs` call while filling a backlog. */
const INSERT_CHUNK = 1000;

/** A logger passing on errors only: graphile-worker's info lines (one per job) would drown the progress. */
const errorsTo = (onError: (error: Error) => void) =>
  new Logger(() => (level, message) => {
    if (String(level) === 'error') onError(new Error(`graphile-worker: ${message}`));
  });

const shared = (config: QueueConfig, onError: (error: Error) => void) => ({
  connectionString: config.url,
  schema: config.schema,
  logger: errorsTo(onError),
});

const toStderr = (error: Error) => process.stderr.write(`${error.message}\n`);

async function count(utils: WorkerUtils, schema: string, condition: string): Promise<number> {
  const { rows } = await utils.withPgClient((client) =>
    client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.jobs WHERE ${condition}`),
  );
  return rows[0]!.n;
}

/** The worker options of the batched configuration (see above); none for the defaults. */
const batching = (concurrency: number) => ({
  preset: { worker: { localQueue: { size: concurrency + 1 }, completeJobBatchDelay: 0 } },
});

/** graphile-worker 0.17, at its defaults or `batched`. */
const graphileWith = (name: string, batched: boolean): QueueSystem => ({
  name,
  describe: (c) =>
    `run() per process: concurrency ${c}, LISTEN/NOTIFY wake-ups (fallback pollInterval ${POLL_INTERVAL_MS} ms), pool max(10, ${c} + 2), ${batched ? `localQueue.size ${c + 1} and completeJobBatchDelay 0 (its batching)` : 'no local queue or completion batching (its defaults)'}; backlog via addJobs(), latency samples via addJob()`,
  async open(config) {
    await runMigrations(shared(config, toStderr));
    const utils = await makeWorkerUtils(shared(config, toStderr));
    return {
      async fill(total) {
        for (let from = 0; from < total; from += INSERT_CHUNK) {
          const size = Math.min(INSERT_CHUNK, total - from);
          await utils.addJobs(
            Array.from({ length: size }, (_, i) => ({
              identifier: TASK,
              payload: { n: from + i },
            })),
          );
        }
      },
      async enqueue() {
        const job = await utils.addJob(TASK, { n: 0 });
        return { key: job.id, committedAt: wallClock() };
      },
      // completed jobs are deleted; failed ones stay with their last error
      unfinished: () => count(utils, config.schema, 'last_error IS NULL'),
      failed: () => count(utils, config.schema, 'last_error IS NOT NULL'),
      close: async () => {
        await utils.release();
      },
    };
  },
  worker(config, onStart, onError) {
    let runner: Runner | undefined;
    return Promise.resolve({
      async go() {
        runner = await run({
          ...shared(config, onError),
          concurrency: config.concurrency,
          maxPoolSize: Math.max(10, config.concurrency + 2),
          pollInterval: POLL_INTERVAL_MS,
          noHandleSignals: true,
          crontab: '',
          ...(batched ? batching(config.concurrency) : {}),
          taskList: {
            // graphile-worker tasks return nothing: the body's result is dropped
            [TASK]: (_payload, helpers) => {
              onStart(helpers.job.id);
              taskBody();
            },
          },
        });
      },
      stop: () => runner?.stop() ?? Promise.resolve(),
    });
  },
});

export const graphileWorker = graphileWith('graphile', false);
export const graphileWorkerBatched = graphileWith('graphile_batched', true);
