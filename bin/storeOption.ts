/**
 * The database a cloud command works on: `--database-url` / `--db`, else DATABASE_URL, else
 * embedded PGlite in SAFFRON_DATA_DIR (default ./.saffron/cloud), so every command works on a
 * fresh machine with no database server.
 */
import { isAbsolute, resolve } from 'node:path';
import {
  describeStoreTarget,
  openStore,
  parseStoreTarget,
  type Store,
  type StoreTarget,
} from '../runtime/index.js';
import type { Command } from 'commander';
import type { CliIo } from './io.js';

/** Options that name a database. */
export interface DatabaseOptions {
  databaseUrl?: string;
  db?: string;
}

/** The location the options or DATABASE_URL name, if any. */
export function explicitLocation(options: DatabaseOptions, io: CliIo): string | undefined {
  const explicit = options.db ?? options.databaseUrl ?? io.env.DATABASE_URL;
  return explicit === undefined || explicit === '' ? undefined : explicit;
}

/**
 * Parse a location string like {@link parseStoreTarget}, but resolve a relative SQLite file
 * or PGlite folder against the command's working directory rather than the process's (they
 * differ when the CLI runs in-process, as in tests).
 */
export function parseLocation(value: string, cwd: string): StoreTarget {
  const target = parseStoreTarget(value);
  const raw = (prefix: string) => {
    const text = value.trim();
    return (text.startsWith(prefix) ? text.slice(prefix.length) : text).replace(/^\/\//, '');
  };
  if (target.kind === 'sqlite' && target.file !== ':memory:') {
    const file = raw('sqlite:');
    return { kind: 'sqlite', file: isAbsolute(file) ? file : resolve(cwd, file) };
  }
  if (target.kind === 'pglite' && target.dataDir !== 'memory') {
    const dir = raw('pglite:');
    return { kind: 'pglite', dataDir: isAbsolute(dir) ? dir : resolve(cwd, dir) };
  }
  return target;
}

/** Where the command's database is. */
export function cloudTarget(options: DatabaseOptions, io: CliIo): StoreTarget {
  const explicit = explicitLocation(options, io);
  if (explicit !== undefined) return parseLocation(explicit, io.cwd);
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

/** Add `--db`, `--database-url` and `--json` to an engine command. */
export function databaseOptions(command: Command): Command {
  return command
    .option(
      '--db <location>',
      'SQLite file, postgres://… URL or pglite:DIR (default: DATABASE_URL, else ./.saffron/saffron.db)',
    )
    .option('--database-url <url>', 'alias of --db')
    .option('--json', 'print the result as JSON');
}
