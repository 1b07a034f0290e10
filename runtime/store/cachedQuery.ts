/**
 * Compile-once queries for the hot paths. Building and compiling a Kysely query costs tens
 * of microseconds, which is a large share of a commit on an in-process database (PGlite,
 * SQLite). A query whose shape never changes is compiled once per store and then executed
 * with new parameters. The first compile checks that the compiled parameters are exactly the
 * values given, in order, so a change to the query's shape cannot silently misplace values.
 */
import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { StoreHandle } from './store.js';

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
      compiled.parameters.every((p, i) => p === parameters[i]);
    if (!same)
      throw new Error(`cached query ${key}: compiled parameters do not follow the given values`);
    h.statements.set(key, compiled);
  }
  return h.db.executeQuery<R>({ ...compiled, parameters });
}
