/**
 * Embedded PostgreSQL (PGlite): the cloud tier's default when no DATABASE_URL is given, so a
 * newcomer runs the control plane with no database server. Data lives in a directory
 * (`SAFFRON_DATA_DIR`, default `./.saffron/cloud`) or in memory. A directory is opened by
 * one process at a time (dataDirLock.ts): PGlite is an in-process database.
 *
 * `@electric-sql/pglite` and `kysely-pglite-dialect` are optional dependencies, imported here
 * on first use (runtime/optionalDependency.ts).
 */
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { importOptional } from '../../optionalDependency.js';
import { postgresCodec } from '../codec.js';
import type { Database } from '../database.js';
import { translateDriverError } from '../errors.js';
import { makeStore, type CloudStore } from '../store.js';
import { lockDataDir } from './dataDirLock.js';

const INT8_OID = 20;

const PACKAGES = ['@electric-sql/pglite', 'kysely-pglite-dialect'];

const loadPglite = () =>
  importOptional(PACKAGES, 'the embedded PostgreSQL store (pglite:)', async () => ({
    PGlite: (await import('@electric-sql/pglite')).PGlite,
    PGliteDialect: (await import('kysely-pglite-dialect')).PGliteDialect,
  }));

/**
 * Open a PGlite database in `dataDir`, or in memory for `'memory'`. A directory is locked
 * for this process until the instance closes; another process holding it is an error
 * (`DATA_DIR_LOCKED`) that names it.
 */
export async function createPglite(dataDir: string): Promise<PGlite> {
  if (dataDir === 'memory') return startPglite(undefined);
  mkdirSync(dataDir, { recursive: true });
  const lock = lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await startPglite(dataDir);
  } catch (error) {
    lock.release();
    throw error;
  }
  const close = pglite.close.bind(pglite);
  pglite.close = async () => {
    try {
      await close();
    } finally {
      lock.release();
    }
  };
  return pglite;
}

async function startPglite(dataDir: string | undefined): Promise<PGlite> {
  const { PGlite } = await loadPglite();
  try {
    return await PGlite.create(dataDir, {
      parsers: { [INT8_OID]: (value: string) => Number(value) },
    });
  } catch (error) {
    throw translateDriverError(error, `open PGlite at ${dataDir ?? 'memory'}`);
  }
}

function borrowed(pglite: PGlite): PGlite {
  const view: Pick<PGlite, 'query' | 'close'> = {
    query: (...args: Parameters<PGlite['query']>) => pglite.query(...args),
    close: async () => {},
  };
  return view as PGlite;
}

/**
 * Open a PGlite store in `dataDir`, or in memory for `'memory'`. With `shared`, the store runs
 * on an instance the caller owns (and closes); several stores can then share one instance.
 */
export async function openPgliteStore(dataDir: string, shared?: PGlite): Promise<CloudStore> {
  const pglite = shared ?? (await createPglite(dataDir));
  // The dialect closes its client when the Kysely instance is destroyed; a shared instance
  // is handed over behind a view whose close() leaves it open for its owner.
  const client = shared ? borrowed(shared) : pglite;
  const { PGliteDialect } = await loadPglite();
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) });
  return makeStore(
    { kind: 'pglite', dataDir },
    { dialect: 'pglite', pglite },
    db,
    postgresCodec,
    async () => {
      if (!shared && !pglite.closed) await pglite.close();
    },
  );
}
