/**
 * SQLite store (the edge tier) over better-sqlite3. WAL lets readers run beside the writer;
 * `synchronous=FULL` makes every commit durable through a power cut, which the payment
 * tables need (an approved offline transaction must never be lost) — except a transaction
 * run with `flush: 'deferred'`, which commits with `synchronous=NORMAL` and reaches the disk
 * with the next durable commit (store.ts TransactionOptions); foreign keys are
 * enforced so the spec's cascades hold on the edge as in the cloud.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { sqliteCodec } from '../codec.js';
import type { Database as Schema } from '../database.js';
import { translateDriverError } from '../errors.js';
import { makeStore, type EdgeStore } from '../store.js';
import { cacheStatements } from './cacheStatements.js';
import { rewriteWrites, type WriteTextRewriter } from './rewriteWrites.js';

/** The store's flush level: every commit durable through a power cut. */
const SYNCHRONOUS = 'FULL';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** Rewrites the text parameters of writing statements (rewriteWrites.ts); none by default. */
  rewriteWrites?: WriteTextRewriter;
}

/** Open (creating when absent) a SQLite database file, or `:memory:`. */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): EdgeStore {
  let database: Database.Database;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    database = new Database(file);
    database.pragma('journal_mode = WAL');
    database.pragma(`synchronous = ${SYNCHRONOUS}`);
    database.pragma('foreign_keys = ON');
    database.pragma('busy_timeout = 5000');
  } catch (error) {
    throw translateDriverError(error, `open SQLite database ${file}`);
  }
  const connection = cacheStatements(
    options.rewriteWrites ? rewriteWrites(database, options.rewriteWrites) : database,
  );
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: connection }) });
  return makeStore(
    { kind: 'sqlite', file },
    { dialect: 'sqlite', database },
    db,
    sqliteCodec,
    () => {
      if (database.open) database.close();
      return Promise.resolve();
    },
    {
      enter: CompiledQuery.raw('PRAGMA synchronous = NORMAL'),
      leave: CompiledQuery.raw(`PRAGMA synchronous = ${SYNCHRONOUS}`),
    },
    connection,
  );
}
