/**
 * Schemas of one queue benchmark run: every measurement gets a fresh, empty schema (no dead
 * rows or warmed caches left by the previous one), and every schema created is dropped at the
 * end, whatever happened.
 */
import pg from 'pg';

/** The schemas a run created and has not dropped yet. */
export interface Schemas {
  /** Create an empty schema and return its name. */
  create(): Promise<string>;
  drop(name: string): Promise<void>;
  /**
   * Take planner statistics of every table in schema `name`, as autovacuum does for a table
   * in use: without them each system's plans are guesses about an empty table.
   */
  analyze(name: string): Promise<void>;
  /** Drop every schema still there. */
  dropAll(): Promise<void>;
}

/** Schemas named `<prefix>_<pid>_<n>` (default `saffron_bench_queue_<pid>_<n>`) on the database at `url`. */
export function benchSchemas(url: string, prefix = 'saffron_bench_queue'): Schemas {
  const live = new Set<string>();
  let created = 0;
  const admin = async (use: (client: pg.Client) => Promise<unknown>) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await use(client);
    } finally {
      await client.end();
    }
  };
  const schemas: Schemas = {
    async create() {
      const name = `${prefix}_${process.pid}_${created++}`;
      live.add(name);
      await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE; CREATE SCHEMA ${name}`));
      return name;
    },
    async drop(name) {
      await admin((c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`));
      live.delete(name);
    },
    analyze: (name) =>
      admin(async (c) => {
        const { rows } = await c.query<{ name: string }>(
          `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1`,
          [name],
        );
        if (rows.length > 0) await c.query(`ANALYZE ${rows.map((r) => r.name).join(', ')}`);
      }),
    async dropAll() {
      for (const name of [...live]) await schemas.drop(name);
    },
  };
  return schemas;
}
