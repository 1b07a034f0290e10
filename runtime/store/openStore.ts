/**
 * Open a store for any {@link StoreTarget}. The PostgreSQL and PGlite drivers are loaded
 * when a store of theirs is opened, so a terminal on SQLite never loads `pg` or PGlite.
 */
import type { PostgresStoreOptions } from './postgres/openPostgresStore.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/openSqliteStore.js';
import type { CloudStore, EdgeStore } from './store.js';
import { parseStoreTarget, type StoreTarget } from './target.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  postgres?: PostgresStoreOptions;
  sqlite?: SqliteStoreOptions;
}

/** Open the store at `target` (a {@link StoreTarget} or a location string). */
export async function openStore(
  target: StoreTarget | string,
  options: OpenStoreOptions = {},
): Promise<CloudStore | EdgeStore> {
  const parsed = typeof target === 'string' ? parseStoreTarget(target) : target;
  switch (parsed.kind) {
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres/openPostgresStore.js');
      return openPostgresStore(parsed.url, options.postgres);
    }
    case 'pglite': {
      // PGlite is an optional dependency: loaded only when a `pglite:` store is opened
      const { openPgliteStore } = await import('./pglite/openPgliteStore.js');
      return openPgliteStore(parsed.dataDir);
    }
    case 'sqlite':
      return openSqliteStore(parsed.file, options.sqlite);
  }
}
