/**
 * `saffron db stats`: row counts per table, workflows by status, and the database size.
 */
import { sql } from 'kysely';
import { CLOUD_SCHEMA, EDGE_SCHEMA } from '../schema/tables.js';
import { translateDriverError } from './errors.js';
import type { Store } from './store.js';

/** Statistics of one database. */
export interface StoreStats {
  dialect: Store['dialect'];
  /** Row count per table of the model; null when the table does not exist. */
  tables: Record<string, number | null>;
  workflowsByStatus: Record<string, number>;
  sizeBytes: number | null;
}

async function tableNames(store: Store): Promise<Set<string>> {
  const rows =
    store.dialect === 'sqlite'
      ? await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(
          store.db,
        )
      : await sql<{ name: string }>`SELECT relname AS name FROM pg_class
          WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`.execute(store.db);
  return new Set(rows.rows.map((r) => r.name));
}

async function databaseSize(store: Store): Promise<number | null> {
  if (store.dialect === 'sqlite') {
    const r = await sql<{ size: number }>`
      SELECT page_count * page_size AS size FROM pragma_page_count(), pragma_page_size()`.execute(
      store.db,
    );
    return r.rows[0]?.size ?? null;
  }
  const r = await sql<{
    size: string | number;
  }>`SELECT pg_database_size(current_database()) AS size`.execute(store.db);
  return r.rows[0] ? Number(r.rows[0].size) : null;
}

/** Collect statistics of the store's tier tables. */
export async function collectStats(store: Store): Promise<StoreStats> {
  try {
    const present = await tableNames(store);
    const tables: Record<string, number | null> = {};
    for (const t of store.dialect === 'sqlite' ? EDGE_SCHEMA : CLOUD_SCHEMA) {
      if (!present.has(t.name)) {
        tables[t.name] = null;
        continue;
      }
      const r = await sql<{
        n: string | number;
      }>`SELECT count(*) AS n FROM ${sql.table(t.name)}`.execute(store.db);
      tables[t.name] = Number(r.rows[0]?.n ?? 0);
    }
    const workflowsByStatus: Record<string, number> = {};
    if (present.has('workflow_executions')) {
      const rows = await store.db
        .selectFrom('workflow_executions')
        .select((eb) => ['status', eb.fn.countAll<string | number>().as('n')])
        .groupBy('status')
        .orderBy('status')
        .execute();
      for (const r of rows) workflowsByStatus[r.status] = Number(r.n);
    }
    return {
      dialect: store.dialect,
      tables,
      workflowsByStatus,
      sizeBytes: await databaseSize(store),
    };
  } catch (error) {
    throw translateDriverError(error, 'collect database statistics');
  }
}
