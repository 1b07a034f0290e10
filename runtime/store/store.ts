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
import type { CloudDatabase, CoreDatabase, Database, EdgeDatabase } from './database.js';
import { StoreConfigError } from './errors.js';
import type { StoreDialect, StoreTarget } from './target.js';

/**
 * What an operation needs: the query builder (store or transaction) and the codec. `db`
 * reaches the engine's tables, which every store has; a cloud or edge store adds a view of
 * its own tier's tables ({@link CloudHandle}, {@link EdgeHandle}).
 */
export interface StoreHandle {
  readonly dialect: StoreDialect;
  readonly db: Kysely<CoreDatabase>;
  readonly codec: Codec;
  /** Compiled hot-path queries of this store (see cachedQuery.ts), shared by its transactions. */
  readonly statements: Map<string, CompiledQuery>;
  /**
   * Inside a transaction of a SQLite store only: the connection the transaction holds, on
   * which a compiled hot-path query runs directly (cachedQuery.ts). Absent everywhere else.
   */
  readonly sqliteInTransaction?: BetterSqlite3.Database;
}

/** A handle on a cloud store (PostgreSQL, PGlite): the control plane's tables too. */
export interface CloudHandle extends StoreHandle {
  readonly dialect: 'postgres' | 'pglite';
  /** The same connection or transaction as `db`, typed with the cloud's tables. */
  readonly cloud: Kysely<CloudDatabase>;
}

/** A handle on an edge store (SQLite): the terminal's tables too. */
export interface EdgeHandle extends StoreHandle {
  readonly dialect: 'sqlite';
  /** The same connection or transaction as `db`, typed with the terminal's tables. */
  readonly edge: Kysely<EdgeDatabase>;
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
   * commit that flushes them (docs/architecture.md#durability;
   * actors/runtime/groupCommitQueue.ts). PostgreSQL and PGlite ignore it: their durability is
   * the server's.
   */
  flush?: 'durable' | 'deferred';
}

/** An open store of either tier. */
export interface Store extends StoreHandle {
  readonly target: StoreTarget;
  readonly driver: StoreDriver;
  /** Run `fn` in one database transaction; it commits when `fn` resolves. */
  transaction<T>(fn: (tx: StoreHandle) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Close connections. Idempotent. */
  close(): Promise<void>;
}

/** An open cloud store (PostgreSQL, PGlite). */
export interface CloudStore extends Store, CloudHandle {
  readonly dialect: 'postgres' | 'pglite';
  transaction<T>(fn: (tx: CloudHandle) => Promise<T>, options?: TransactionOptions): Promise<T>;
}

/** An open edge store (SQLite). */
export interface EdgeStore extends Store, EdgeHandle {
  readonly dialect: 'sqlite';
  transaction<T>(fn: (tx: EdgeHandle) => Promise<T>, options?: TransactionOptions): Promise<T>;
}

/** `store` as a cloud store; throws a {@link StoreConfigError} for an edge (SQLite) store. */
export function asCloud(store: Store): CloudStore;
/** `h` as a cloud handle; throws a {@link StoreConfigError} for an edge (SQLite) one. */
export function asCloud(h: StoreHandle): CloudHandle;
export function asCloud(h: StoreHandle): CloudHandle {
  if (!('cloud' in h))
    throw new StoreConfigError('this needs a cloud store (PostgreSQL or PGlite), not SQLite');
  return h as CloudHandle;
}

/** `store` as an edge store; throws a {@link StoreConfigError} for a cloud store. */
export function asEdge(store: Store): EdgeStore;
/** `h` as an edge handle; throws a {@link StoreConfigError} for a cloud one. */
export function asEdge(h: StoreHandle): EdgeHandle;
export function asEdge(h: StoreHandle): EdgeHandle {
  if (!('edge' in h)) throw new StoreConfigError('this needs an edge store (SQLite)');
  return h as EdgeHandle;
}

/** Whether `store` is a cloud store. */
export const isCloudStore = (store: Store): store is CloudStore => 'cloud' in store;
/** Whether `store` is an edge store. */
export const isEdgeStore = (store: Store): store is EdgeStore => 'edge' in store;

/**
 * Run a transaction on one connection with a flush setting of its own: `enter` before BEGIN
 * and `leave` after COMMIT or ROLLBACK (SQLite refuses to change `synchronous` inside a
 * transaction), with the connection held throughout so nothing else runs in between.
 */
export interface DeferredFlush {
  enter: CompiledQuery;
  leave: CompiledQuery;
}

/**
 * Build a store around a Kysely instance: a cloud store on PostgreSQL and PGlite, an edge
 * store on SQLite (the view of its tier's tables is the same instance, typed wider).
 */
export function makeStore(
  target: StoreTarget,
  driver: Extract<StoreDriver, { dialect: 'sqlite' }>,
  db: Kysely<Database>,
  codec: Codec,
  onClose: () => Promise<void>,
  deferredFlush?: DeferredFlush,
  sqliteConnection?: BetterSqlite3.Database,
): EdgeStore;
export function makeStore(
  target: StoreTarget,
  driver: Exclude<StoreDriver, { dialect: 'sqlite' }>,
  db: Kysely<Database>,
  codec: Codec,
  onClose: () => Promise<void>,
  deferredFlush?: DeferredFlush,
  sqliteConnection?: BetterSqlite3.Database,
): CloudStore;
export function makeStore(
  target: StoreTarget,
  driver: StoreDriver,
  db: Kysely<Database>,
  codec: Codec,
  onClose: () => Promise<void>,
  deferredFlush?: DeferredFlush,
  sqliteConnection?: BetterSqlite3.Database,
): CloudStore | EdgeStore {
  let closed: Promise<void> | undefined;
  const dialect = driver.dialect;
  const statements = new Map<string, CompiledQuery>();
  // the one instance, typed for the engine's tables and for the tier's own
  const views = (k: Kysely<Database>) =>
    dialect === 'sqlite'
      ? { db: k as unknown as Kysely<CoreDatabase>, edge: k as unknown as Kysely<EdgeDatabase> }
      : { db: k as unknown as Kysely<CoreDatabase>, cloud: k as unknown as Kysely<CloudDatabase> };
  const handle = (tx: Kysely<Database>) =>
    ({
      dialect,
      ...views(tx),
      codec,
      statements,
      ...(sqliteConnection ? { sqliteInTransaction: sqliteConnection } : {}),
    }) as CloudHandle & EdgeHandle;
  return {
    target,
    driver,
    dialect,
    ...views(db),
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
  } as CloudStore & EdgeStore;
}
