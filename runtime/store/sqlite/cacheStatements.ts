/**
 * Prepared-statement cache for better-sqlite3 under Kysely. Kysely's SQLite driver calls
 * `prepare(sql)` for every query, which compiles the statement again each time; caching by
 * SQL text (bounded, least recently used first out) makes a query-builder write cost about
 * what a hand-held prepared statement costs (bench/store).
 */
import type BetterSqlite3 from 'better-sqlite3';

const MAX_CACHED = 500;

/** A view of `database` whose `prepare` returns cached statements. */
export function cacheStatements(database: BetterSqlite3.Database): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = (source: string): BetterSqlite3.Statement => {
    let statement = cache.get(source);
    if (statement) {
      cache.delete(source);
    } else {
      statement = database.prepare(source);
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return statement;
  };
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
