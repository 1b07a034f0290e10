/**
 * graphile-worker under test: `run()` with `concurrency` jobs at once per process, woken by
 * LISTEN/NOTIFY on `jobs:insert` (its `pollInterval` is only the fallback), each job locked
 * by `get_job` (SKIP LOCKED) and deleted by `complete_job` when it succeeds.
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

/** graphile-worker 0.17. */
export const graphileWorker: QueueSystem = {
  name: 'graphile',
  describe: (c) =>
    `run() per process: concurrency ${c}, LISTEN/NOTIFY wake-ups (fallback pollInterval ${POLL_INTERVAL_MS} ms), pool max(10, ${c} + 2), no local queue or completion batching (its defaults); backlog via addJobs(), latency samples via addJob()`,
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
};
