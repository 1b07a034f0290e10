/**
 * The store: a Kysely instance over one of three dialects, plus the codec that maps the
 * spec's cloud types onto the edge's. Operations are small functions in the folders beside
 * this file that take a {@link StoreHandle} first (graphile-worker style), so the same
 * function runs on the store itself or inside a transaction.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import type { Pool } from 'pg';
import type { Codec } from './codec.js';
import type { Database } from './database.js';
import type { StoreDialect, StoreTarget } from './target.js';

/** What an operation needs: the query builder (store or transaction) and the codec. */
export interface StoreHandle {
  readonly dialect: StoreDialect;
  readonly db: Kysely<Database>;
  readonly codec: Codec;
  /** Compiled hot-path queries of this store (see cachedQuery.ts), shared by its transactions. */
  readonly statements: Map<string, CompiledQuery>;
  /**
   * Inside a transaction of a SQLite store only: the connection the transaction holds, on
   * which a compiled hot-path query runs directly (cachedQuery.ts). Absent everywhere else.
   */
  readonly sqliteInTransaction?: BetterSqlite3.Database;
}

/**
 * The PGlite instance under a `pglite:` store: the part of `@electric-sql/pglite`'s `PGlite`
 * that dialect-specific code uses. PGlite is an optional dependency, so the declarations an
 * embedder compiles against do not name its types.
 */
export interface PgliteDriver {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  exec(sql: string): Promise<unknown>;
  readonly closed: boolean;
  close(): Promise<void>;
}

/** The raw driver under a store, for dialect-specific work (LISTEN/NOTIFY, benchmarks). */
export type StoreDriver =
  | { dialect: 'postgres'; pool: Pool }
  | { dialect: 'pglite'; pglite: PgliteDriver }
  | { dialect: 'sqlite'; database: BetterSqlite3.Database };

/** How a transaction's commit reaches the disk. */
export interface TransactionOptions {
  /**
   * `durable` (default): the commit survives a power cut once it returns. `deferred`: it
   * survives a crash of the process at once, and a power cut from the next durable commit
   * of the same store on, which flushes it too (SQLite: the transaction commits with
   * `synchronous=NORMAL`, and WAL frames reach the disk in order, so the next `FULL`
   * commit's flush covers it). For work that may be lost with the power as long as what
   * follows it is not: a running workflow's intermediate steps written ahead of the
   * commit that flushes them (docs/architecture.md#durability; actors/runtime/commitQueue.ts). PostgreSQL
   * and PGlite ignore it: their durability is the server's.
   */
  flush?: 'durable' | 'deferred';
}

/** An open store. */
export interface Store extends StoreHandle {
  readonly target: StoreTarget;
  readonly driver: StoreDriver;
  /** Run `fn` in one database transaction; it commits when `fn` resolves. */
  transaction<T>(fn: (tx: StoreHandle) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Close connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Run a transaction on one connection with a flush setting of its own: `enter` before BEGIN
 * and `leave` after COMMIT or ROLLBACK (SQLite refuses to change `synchronous` inside a
 * transaction), with the connection held throughout so nothing else runs in between.
 */
export interface DeferredFlush {
  enter: CompiledQuery;
  leave: CompiledQuery;
}

/** Build the common parts of a store around a Kysely instance. */
export function makeStore(
  target: StoreTarget,
  driver: StoreDriver,
  db: Kysely<Database>,
  codec: Codec,
  onClose: () => Promise<void>,
  deferredFlush?: DeferredFlush,
  sqliteConnection?: BetterSqlite3.Database,
): Store {
  let closed: Promise<void> | undefined;
  const dialect = driver.dialect;
  const statements = new Map<string, CompiledQuery>();
  const handle = (tx: Kysely<Database>): StoreHandle => ({
    dialect,
    db: tx,
    codec,
    statements,
    ...(sqliteConnection ? { sqliteInTransaction: sqliteConnection } : {}),
  });
  return {
    target,
    driver,
    dialect,
    db,
    codec,
    statements,
    transaction: (fn, options) =>
      deferredFlush && options?.flush === 'deferred'
        ? db.connection().execute(async (conn) => {
            await conn.executeQuery(deferredFlush.enter);
            try {
              return await conn.transaction().execute((tx) => fn(handle(tx)));
            } finally {
              await conn.executeQuery(deferredFlush.leave);
            }
          })
        : db.transaction().execute((tx) => fn(handle(tx))),
    close: () => (closed ??= db.destroy().then(onClose)),
  };
}
