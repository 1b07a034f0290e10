/**
 * The store dialects every conformance test runs against. PostgreSQL runs when DATABASE_URL
 * is set (each opened store gets its own schema, dropped on close unless the test failed:
 * pg-boss style, so a failure can be inspected); PGlite runs in memory; SQLite in a temp file.
 * Under CI=true a missing DATABASE_URL is an error: the PostgreSQL suite is mandatory there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { migrations } from '../../migrations/index.js';
import {
  ensureEdgeSchema,
  migrate,
  type CloudStore,
  type EdgeStore,
  type Store,
  type StoreDialect,
} from '../../runtime/store/index.js';
import { createPglite, openPgliteStore } from '../../runtime/store/pglite/openPgliteStore.js';
import { openPostgresStore } from '../../runtime/store/postgres/openPostgresStore.js';
import { openSqliteStore } from '../../runtime/store/sqlite/openSqliteStore.js';

/** A dialect under test, opening stores of type `S` (a cloud or an edge store). */
export interface TestDialect<S extends Store = Store> {
  name: StoreDialect;
  /** Open an empty store of this dialect (no schema yet). */
  open(): Promise<TestStore<S>>;
}

/** A store opened for a test, with its cleanup. */
export interface TestStore<S extends Store = Store> {
  store: S;
  /** For PostgreSQL: the schema name; for SQLite: the file; for PGlite: 'memory'. */
  location: string;
  close(keep?: boolean): Promise<void>;
}

const databaseUrl = process.env.DATABASE_URL;
if (process.env.CI === 'true' && !databaseUrl) {
  throw new Error('CI=true but DATABASE_URL is not set: the PostgreSQL suite is mandatory in CI');
}

let counter = 0;
const uniqueName = (prefix: string) =>
  `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`;

/** Run SQL on the PostgreSQL server of DATABASE_URL outside any test schema (create/drop schemas). */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const postgres: TestDialect<CloudStore> = {
  name: 'postgres',
  async open() {
    const schema = uniqueName('saffron_test');
    await adminQuery(`CREATE SCHEMA ${schema}`);
    const store = await openPostgresStore(databaseUrl!, { schema, maxConnections: 8 });
    return {
      store,
      location: schema,
      async close(keep = false) {
        await store.close();
        if (!keep) await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      },
    };
  },
};

// One in-memory PGlite per test process (starting one costs about a second); each opened
// store gets its own schema on it, as with PostgreSQL.
let sharedPglite: Promise<PGlite> | undefined;
const pglite: TestDialect<CloudStore> = {
  name: 'pglite',
  async open() {
    const instance = await (sharedPglite ??= createPglite('memory'));
    const schema = uniqueName('saffron_test');
    await instance.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
    const store = await openPgliteStore('memory', instance);
    return {
      store,
      location: schema,
      async close(keep = false) {
        await store.close();
        if (!keep) await instance.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      },
    };
  },
};

const sqlite: TestDialect<EdgeStore> = {
  name: 'sqlite',
  open() {
    const dir = mkdtempSync(join(tmpdir(), 'saffron-test-'));
    const file = join(dir, 'edge.db');
    const store = openSqliteStore(file);
    return Promise.resolve({
      store,
      location: file,
      async close(keep = false) {
        await store.close();
        if (!keep) rmSync(dir, { recursive: true, force: true });
      },
    });
  },
};

/** Every dialect available here: SQLite and PGlite always, PostgreSQL with DATABASE_URL. */
export const DIALECTS: readonly TestDialect[] = databaseUrl
  ? [postgres, pglite, sqlite]
  : [pglite, sqlite];

/** The edge tier's dialect (SQLite). */
export const EDGE_DIALECT: TestDialect<EdgeStore> = sqlite;

/** Dialects of the cloud tier (PostgreSQL when configured, PGlite always). */
export const CLOUD_DIALECTS: readonly TestDialect<CloudStore>[] = databaseUrl
  ? [postgres, pglite]
  : [pglite];

/** Create the tier's schema: migrations for cloud stores, the edge schema for SQLite. */
export async function createSchema(store: Store): Promise<void> {
  if (store.dialect === 'sqlite') {
    await ensureEdgeSchema(store);
    return;
  }
  const results = await migrate(store, migrations);
  const failed = results.find((r) => r.status === 'failed');
  if (failed) throw failed.error ?? new Error(`migration ${failed.id} failed`);
}

/** Open a store of `dialect` with its schema created. */
export async function openWithSchema<S extends Store>(
  dialect: TestDialect<S>,
): Promise<TestStore<S>> {
  const handle = await dialect.open();
  await createSchema(handle.store);
  return handle;
}

/** Run raw SQL against a test store (for hand-made drift and inspection). */
export async function rawExec(handle: TestStore, text: string): Promise<void> {
  const driver = handle.store.driver;
  switch (driver.dialect) {
    case 'postgres':
      await driver.pool.query(text);
      return;
    case 'pglite':
      await driver.pglite.exec(text);
      return;
    case 'sqlite':
      driver.database.exec(text);
      return;
  }
}
