/**
 * Creates the edge tables (core + edge-only) when absent. The spec's edge tier has no
 * migration step: every start runs these `IF NOT EXISTS` statements in one transaction, and
 * drops the indexes the model no longer has, so a terminal's database follows the model. It
 * also recomputes the SAF backlog totals and creates their triggers (safBacklogTotals.ts).
 */
import { sql } from 'kysely';
import { sqliteSchemaStatements } from '../../schema/render/sqlite.js';
import { EDGE_SCHEMA } from '../../schema/tables.js';
import { SaffronError } from '../../errors.js';
import type { Store } from '../store.js';
import { safBacklogTotalsStatements } from './safBacklogTotals.js';

/** Indexes earlier versions created and the model dropped (migrations 0008 and 0009 on the cloud). */
const RETIRED_INDEXES = ['idx_tasks_status_run_after', 'idx_workflow_metrics_name'];

/** Create missing edge tables and indexes; returns the names of the tables it created. */
export async function ensureEdgeSchema(store: Store): Promise<string[]> {
  if (store.dialect !== 'sqlite') {
    throw new SaffronError(
      'SCHEMA_DIALECT',
      'the edge schema is for SQLite stores; cloud stores use migrations',
    );
  }
  return store.transaction(async (tx) => {
    const before = await sql<{
      name: string;
    }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(tx.db);
    const existing = new Set(before.rows.map((r) => r.name));
    for (const statement of sqliteSchemaStatements(EDGE_SCHEMA))
      await sql.raw(statement).execute(tx.db);
    for (const name of RETIRED_INDEXES)
      await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(tx.db);
    for (const statement of safBacklogTotalsStatements(new Date().toISOString()))
      await sql.raw(statement).execute(tx.db);
    return EDGE_SCHEMA.map((t) => t.name).filter((name) => !existing.has(name));
  });
}
