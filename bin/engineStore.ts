/**
 * The database of the engine commands (run, resume, list, show, retry, cancel, pause):
 * `--db` / `--database-url`, else DATABASE_URL, else the SQLite file ./.saffron/saffron.db.
 * A workstation running one workflow needs no server and no setup, so the default is an
 * edge-style file (not the cloud PGlite of `db` commands), and the schema is brought up to
 * date on open: edge tables on SQLite, pending migrations on PostgreSQL and PGlite — so
 * `saffron run --db postgres://…` works on an empty database.
 */
import { resolve } from 'node:path';
import { migrations } from '../migrations/index.js';
import {
  describeStoreTarget,
  ensureEdgeSchema,
  migrate,
  openStore,
  type Store,
  type StoreTarget,
} from '../runtime/store/index.js';
import { CliExit, type CliIo } from './io.js';
import {
  cloudTarget,
  type DatabaseOptions,
  explicitLocation,
  parseLocation,
} from './storeOption.js';

/** Where the engine commands' database is. */
export function engineTarget(options: DatabaseOptions, io: CliIo): StoreTarget {
  const explicit = explicitLocation(options, io);
  if (explicit !== undefined) return parseLocation(explicit, io.cwd);
  return { kind: 'sqlite', file: resolve(io.cwd, '.saffron/saffron.db') };
}

async function prepareSchema(store: Store, label: string, io: CliIo): Promise<void> {
  if (store.dialect === 'sqlite') {
    await ensureEdgeSchema(store);
    return;
  }
  const results = await migrate(store, migrations, (event) => {
    if (event.kind === 'plan' && event.pending.length > 0)
      io.stderr.write(`saffron: applying ${event.pending.length} migration(s) to ${label}\n`);
  });
  const failed = results.find((r) => r.status === 'failed');
  if (failed) throw failed.error ?? new Error(`migration ${failed.id} failed`);
}

/** Open the engine database with its schema up to date; the caller closes it. */
export async function openEngineStore(
  options: DatabaseOptions,
  io: CliIo,
  maxConnections = 4,
): Promise<Store> {
  const target = engineTarget(options, io);
  const store = await openStore(target, { postgres: { maxConnections } });
  try {
    await prepareSchema(store, describeStoreTarget(target), io);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/**
 * Open the control plane's database (`--db`, else DATABASE_URL, else embedded PGlite under
 * SAFFRON_DATA_DIR) with its migrations applied; the caller closes it. SQLite is an edge
 * database and is refused.
 */
export async function openCloudStore(
  options: DatabaseOptions,
  io: CliIo,
  maxConnections = 10,
): Promise<Store> {
  const target = cloudTarget(options, io);
  if (target.kind === 'sqlite')
    throw new CliExit(2, 'the control plane needs PostgreSQL or PGlite, not a SQLite file');
  const store = await openStore(target, { postgres: { maxConnections } });
  try {
    await prepareSchema(store, describeStoreTarget(target), io);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
