/**
 * PostgreSQL store over a `pg` pool. BIGINT (int8) values are parsed to numbers through a
 * pool-local type parser rather than pg's global one, so embedding Saffron never changes how
 * the host application's own pg clients parse values.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { postgresCodec } from '../codec.js';
import type { Database } from '../database.js';
import { translateDriverError } from '../errors.js';
import { makeStore, type CloudStore } from '../store.js';
import { prepareStatements } from './prepareStatements.js';

/** Options of a PostgreSQL store. */
export interface PostgresStoreOptions {
  /** Pool size (default 10). */
  maxConnections?: number;
  /** Schema to put first on the search path (tests isolate themselves this way). */
  schema?: string;
  /** Application name shown in pg_stat_activity. */
  applicationName?: string;
}

const INT8_OID = 20;

/** Open a PostgreSQL store and check that the server answers. */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<CloudStore> {
  const defaults = pg.types;
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
      oid === INT8_OID
        ? (value: string) => Number(value)
        : defaults.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? 'saffron',
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    types,
  });
  prepareStatements(pool);
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });
  // pg-pool listens for errors on idle clients only: a checked-out client (a Kysely query or
  // transaction, a LISTEN connection, an advisory-lock holder) whose server goes away — a
  // PostgreSQL restart — emits 'error' with no listener, which kills the process. Its pending
  // query is rejected anyway and the pool discards the broken client on release, so the
  // event itself needs no handling; the chaos run (test/chaos) restarts PostgreSQL to keep
  // this so.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw translateDriverError(error, 'connect to PostgreSQL');
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return makeStore(
    { kind: 'postgres', url },
    { dialect: 'postgres', pool },
    db,
    postgresCodec,
    async () => {},
  );
}
