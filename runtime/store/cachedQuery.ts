/**
 * Compile-once queries for the hot paths. Building and compiling a Kysely query costs tens
 * of microseconds, which is a large share of a commit on an in-process database (PGlite,
 * SQLite). A query whose shape never changes is compiled once per store and then executed
 * with new parameters. The first compile checks that the compiled parameters are exactly the
 * values given, in order, so a change to the query's shape cannot silently misplace values.
 *
 * Multi-row inserts (a step commit's audit rows, metrics) are compiled once per row count, up
 * to {@link MAX_CACHED_ROWS} rows; larger batches, rare and already amortised over many
 * rows, are built per call, so the cache stays small whatever the batch sizes.
 */
import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { StoreHandle } from './store.js';

/** A statement's parameters, and how to compile it when a store first runs it. */
export interface CachedStatement<R> {
  parameters: unknown[];
  compile: () => CompiledQuery<R>;
}

/** Execute the query `build` returns, compiling it only the first time for `key`. */
export async function executeCached<R>(
  h: StoreHandle,
  key: string,
  parameters: readonly unknown[],
  build: () => Compilable<R>,
): Promise<QueryResult<R>> {
  let compiled = h.statements.get(key) as CompiledQuery<R> | undefined;
  if (compiled === undefined) {
    compiled = build().compile();
    const same =
      compiled.parameters.length === parameters.length &&
      compiled.parameters.every((p, i) => Object.is(p, parameters[i]));
    if (!same)
      throw new Error(`cached query ${key}: compiled parameters do not follow the given values`);
    h.statements.set(key, compiled);
  }
  const sqlite = h.sqliteInTransaction;
  // a handle kept past its transaction goes through Kysely, which refuses it
  if (sqlite?.inTransaction) return runOnSqlite<R>(sqlite, compiled.sql, parameters);
  return h.db.executeQuery<R>({ ...compiled, parameters });
}

/**
 * Run a compiled query on the SQLite connection a transaction holds, as Kysely's SQLite
 * driver would (same statement, same result shape) without its per-query layers: every query
 * awaits a connection provider, a mutex and a result transformer, about 2 KB of promises and
 * closures for a statement that itself runs in microseconds. Only a transaction handle
 * carries the connection: the transaction holds Kysely's connection lock, and better-sqlite3
 * runs the statement synchronously, so nothing else can run on the connection in between.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a statement that throws rejects, as through Kysely
async function runOnSqlite<R>(
  sqlite: NonNullable<StoreHandle['sqliteInTransaction']>,
  sql: string,
  parameters: readonly unknown[],
): Promise<QueryResult<R>> {
  const statement = sqlite.prepare(sql);
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
}

/** Most rows of a multi-row insert that {@link executeCachedRows} compiles once. */
const MAX_CACHED_ROWS = 16;

/**
 * Execute the multi-row insert `build` returns for `rows` — objects with the same columns in
 * the same order, as the insert lists them — compiling it once per row count.
 */
export async function executeCachedRows<R>(
  h: StoreHandle,
  key: string,
  rows: readonly Record<string, unknown>[],
  build: () => Compilable<R>,
): Promise<QueryResult<R>> {
  if (rows.length > MAX_CACHED_ROWS) return h.db.executeQuery<R>(build().compile());
  const parameters: unknown[] = [];
  for (const row of rows)
    for (const value of Object.values(row)) {
      // kysely leaves an undefined column out: the statement's shape would differ, build it anew
      if (value === undefined) return h.db.executeQuery<R>(build().compile());
      parameters.push(value);
    }
  // the columns are part of the key: rows of another shape never reuse this statement
  const columns = Object.keys(rows[0] ?? {}).join(',');
  return executeCached(h, `${key}:${rows.length}:${columns}`, parameters, build);
}
