/**
 * The database of the engine commands (run, resume, list, show, retry, cancel, pause):
 * `--db` / `--database-url`, else DATABASE_URL, else the SQLite file ./.saffron/saffron.db.
 * A workstation running one workflow needs no server and no setup, so the default is an
 * edge-style file (not the cloud PGlite of `db` commands), and the schema is brought up to
 * date on open: edge tables on SQLite, pending migrations on PostgreSQL and PGlite — so
 * `saffron run --db postgres://…` works on an empty database.
 *
 * The default is relative to the working directory, so the same command run from another
 * folder silently opens (and creates) another, empty database, and a `resume` there answers
 * only WORKFLOW_NOT_FOUND. So a command on the default database says on stderr which file it
 * opened and whether it just created it, and withRuntime names the database in a
 * WORKFLOW_NOT_FOUND.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { migrations } from '../migrations/index.js';
import {
  asCloud,
  describeStoreTarget,
  ensureEdgeSchema,
  migrate,
  openStore,
  type CloudStore,
  type Store,
  type StoreTarget,
} from '../runtime/index.js';
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

/** Which engine database a command opened, for what it tells its user. */
export interface EngineDatabase {
  /** The location, a password in it redacted (`sqlite:/home/kim/.saffron/saffron.db`). */
  label: string;
  /** Neither `--db`, `--database-url` nor DATABASE_URL chose it. */
  isDefault: boolean;
  /** The default file did not exist: this command created it, empty. */
  created: boolean;
}

/**
 * Open the engine database with its schema up to date; the caller closes the store. On the
 * default file, say on stderr which one it is and whether it was just created.
 */
export async function openEngineDatabase(
  options: DatabaseOptions,
  io: CliIo,
  maxConnections = 4,
): Promise<{ store: Store; database: EngineDatabase }> {
  const target = engineTarget(options, io);
  const isDefault = explicitLocation(options, io) === undefined;
  const created = isDefault && target.kind === 'sqlite' && !existsSync(target.file);
  const database = { label: describeStoreTarget(target), isDefault, created };
  const store = await openStore(target, { postgres: { maxConnections } });
  try {
    await prepareSchema(store, database.label, io);
  } catch (error) {
    await store.close();
    throw error;
  }
  if (isDefault) io.stderr.write(`saffron: ${describeEngineDatabase(database)}\n`);
  return { store, database };
}

/** Open the engine database (see {@link openEngineDatabase}); the caller closes it. */
export async function openEngineStore(
  options: DatabaseOptions,
  io: CliIo,
  maxConnections = 4,
): Promise<Store> {
  return (await openEngineDatabase(options, io, maxConnections)).store;
}

/** One line on the database a command used, e.g. for stderr or an error message. */
export function describeEngineDatabase(database: EngineDatabase): string {
  if (!database.isDefault) return `database ${database.label}`;
  const how = database.created ? ' (did not exist: created it, empty)' : '';
  return `database ${database.label}${how}, the default in the working directory; --db or DATABASE_URL opens another`;
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
): Promise<CloudStore> {
  const target = cloudTarget(options, io);
  if (target.kind === 'sqlite')
    throw new CliExit(2, 'the control plane needs PostgreSQL or PGlite, not a SQLite file');
  const store = asCloud(await openStore(target, { postgres: { maxConnections } }));
  try {
    await prepareSchema(store, describeStoreTarget(target), io);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
