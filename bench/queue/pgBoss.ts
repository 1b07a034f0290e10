/**
 * pg-boss under test. v10 workers poll (no LISTEN/NOTIFY): `work()` fetches up to `batchSize`
 * jobs with SKIP LOCKED, runs the handler on the batch, completes the whole batch in one
 * statement, then sleeps for what is left of `pollingIntervalSeconds` (minimum 0.5 s) —
 * even after a full batch. One `work()` per process with `batchSize` = the concurrency gives
 * it the same number of tasks in flight as Saffron's batch claim.
 */
import PgBoss from 'pg-boss';
import { taskBody, wallClock, type QueueConfig, type QueueSystem } from './system.js';

const QUEUE = 'bench_queue';
/** pg-boss's minimum polling interval. */
const POLLING_INTERVAL_SECONDS = 0.5;
/** Jobs per `insert` call while filling a backlog. */
const INSERT_CHUNK = 1000;

/** A pg-boss instance on `config.schema` without maintenance or cron loops. */
async function startBoss(
  config: QueueConfig,
  options: { migrate: boolean },
  onError: (error: Error) => void,
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: config.url,
    schema: config.schema,
    max: config.concurrency + 2,
    supervise: false,
    schedule: false,
    migrate: options.migrate,
  });
  boss.on('error', onError);
  await boss.start();
  return boss;
}

async function count(boss: PgBoss, schema: string, condition: string): Promise<number> {
  const { rows } = await boss
    .getDb()
    .executeSql(`SELECT count(*)::int AS n FROM ${schema}.job WHERE name = $1 AND ${condition}`, [
      QUEUE,
    ]);
  return (rows[0] as { n: number }).n;
}

/** pg-boss v10. */
export const pgBoss: QueueSystem = {
  name: 'pgboss',
  describe: (c) =>
    `one work() per process: batchSize ${c}, pollingIntervalSeconds ${POLLING_INTERVAL_SECONDS} (its minimum; v10 has no LISTEN/NOTIFY), supervise and schedule off, pool ${c + 2}; backlog via insert(), latency samples via send()`,
  async open(config) {
    const boss = await startBoss(config, { migrate: true }, (error) =>
      process.stderr.write(`pg-boss: ${error.message}\n`),
    );
    await boss.createQueue(QUEUE);
    return {
      async fill(total) {
        for (let from = 0; from < total; from += INSERT_CHUNK) {
          const size = Math.min(INSERT_CHUNK, total - from);
          await boss.insert(
            Array.from({ length: size }, (_, i) => ({ name: QUEUE, data: { n: from + i } })),
          );
        }
      },
      async enqueue() {
        const id = await boss.send(QUEUE, { n: 0 });
        if (id === null) throw new Error('pg-boss did not queue the job');
        return { key: id, committedAt: wallClock() };
      },
      unfinished: () => count(boss, config.schema, `state < 'completed'`),
      failed: () => count(boss, config.schema, `state = 'failed'`),
      close: () => boss.stop({ graceful: false, wait: true }),
    };
  },
  async worker(config, onStart, onError) {
    const boss = await startBoss(config, { migrate: false }, onError);
    return {
      async go() {
        await boss.work(
          QUEUE,
          { batchSize: config.concurrency, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS },
          (jobs) =>
            Promise.resolve(
              jobs.map((job) => {
                onStart(job.id);
                return taskBody();
              }),
            ),
        );
      },
      stop: () => boss.stop({ graceful: true, wait: true }),
    };
  },
};
