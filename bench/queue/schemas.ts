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
  /** Drop every schema still there. */
  dropAll(): Promise<void>;
}

/** Schemas named `<prefix>_<pid>_<n>` (default `saffron_bench_queue_<pid>_<n>`) on the database at `url`. */
export function benchSchemas(url: string, prefix = 'saffron_bench_queue'): Schemas {
  const live = new Set<string>();
  let created = 0;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  const schemas: Schemas = {
    async create() {
      const name = `${prefix}_${process.pid}_${created++}`;
      live.add(name);
      await admin(`DROP SCHEMA IF EXISTS ${name} CASCADE; CREATE SCHEMA ${name}`);
      return name;
    },
    async drop(name) {
      await admin(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      live.delete(name);
    },
    async dropAll() {
      for (const name of [...live]) await schemas.drop(name);
    },
  };
  return schemas;
}
