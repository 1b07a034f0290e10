/**
 * The database a cloud command works on: `--database-url` / `--db`, else DATABASE_URL, else
 * embedded PGlite in SAFFRON_DATA_DIR (default ./.saffron/cloud), so every command works on a
 * fresh machine with no database server.
 */
import { resolve } from 'node:path';
import {
  describeStoreTarget,
  openStore,
  parseStoreTarget,
  type Store,
  type StoreTarget,
} from '../runtime/store/index.js';
import type { CliIo } from './io.js';

/** Options that name a database. */
export interface DatabaseOptions {
  databaseUrl?: string;
  db?: string;
}

/** Where the command's database is. */
export function cloudTarget(options: DatabaseOptions, io: CliIo): StoreTarget {
  const explicit = options.db ?? options.databaseUrl ?? io.env.DATABASE_URL;
  if (explicit !== undefined && explicit !== '') return parseStoreTarget(explicit);
  const dataDir = io.env.SAFFRON_DATA_DIR ?? resolve(io.cwd, '.saffron/cloud');
  return { kind: 'pglite', dataDir: resolve(io.cwd, dataDir) };
}

/** Open the command's database, run `fn`, and close it whatever happens. */
export async function withStore<T>(
  options: DatabaseOptions,
  io: CliIo,
  fn: (store: Store, label: string) => Promise<T>,
): Promise<T> {
  const target = cloudTarget(options, io);
  const store = await openStore(target, { postgres: { maxConnections: 2 } });
  try {
    return await fn(store, describeStoreTarget(target));
  } finally {
    await store.close();
  }
}
