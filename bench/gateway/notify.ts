/**
 * Does PostgreSQL NOTIFY limit the push rate across gateways? A transaction that sends
 * NOTIFY takes a database-wide lock on the notification queue while it commits, so
 * committing notifiers run one at a time. This measures, on the benchmark's database, small
 * write transactions per second at a fixed concurrency with and without a `pg_notify` in
 * each (a listener connected, as the gateways' is), alternating in rounds so both see the
 * same machine. Push routing sends one NOTIFY per command-creating transaction, so the
 * notifying rate is the ceiling it puts on pushes that must cross gateways.
 */
import pg from 'pg';

/** Commits per second with and without a NOTIFY in each transaction. */
export interface NotifyResult {
  plainCommitsPerS: number;
  notifyCommitsPerS: number;
}

const CHANNEL = 'saffron_bench_notify';

async function commitsPerS(
  pool: pg.Pool,
  concurrency: number,
  ms: number,
  notify: boolean,
): Promise<number> {
  let done = 0;
  const end = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const client = await pool.connect();
      try {
        while (performance.now() < end) {
          await client.query('BEGIN');
          await client.query('INSERT INTO bench_notify_rows (worker) VALUES ($1)', [worker]);
          if (notify) await client.query('SELECT pg_notify($1, $2)', [CHANNEL, `w${worker}`]);
          await client.query('COMMIT');
          done++;
        }
      } finally {
        client.release();
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** Measure in `rounds` alternating rounds of `seconds` each way; medians. */
export async function measureNotify(options: {
  url: string;
  schema: string;
  concurrency: number;
  seconds: number;
  rounds: number;
}): Promise<NotifyResult> {
  const { url, schema, concurrency, seconds, rounds } = options;
  const pool = new pg.Pool({
    connectionString: url,
    max: concurrency,
    options: `-c search_path=${schema}`,
  });
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  let heard = 0;
  listener.on('notification', () => heard++);
  try {
    await pool.query('CREATE TABLE bench_notify_rows (id bigserial PRIMARY KEY, worker int)');
    await listener.query(`LISTEN ${CHANNEL}`);
    const plain: number[] = [];
    const notified: number[] = [];
    const ms = (seconds * 1000) / rounds;
    for (let r = 0; r < rounds; r++) {
      plain.push(await commitsPerS(pool, concurrency, ms, false));
      notified.push(await commitsPerS(pool, concurrency, ms, true));
    }
    if (heard === 0) throw new Error('bench notify: the listener heard no notification');
    return { plainCommitsPerS: median(plain), notifyCommitsPerS: median(notified) };
  } finally {
    await listener.end();
    await pool.query('DROP TABLE IF EXISTS bench_notify_rows');
    await pool.end();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
