/**
 * WAL checkpoints of a SQLite store, for a writer that must not wait for one. By default
 * SQLite checkpoints inside the commit that takes the log past 1,000 pages: that commit
 * copies the log's pages into the database file and flushes both, several times a plain
 * commit's time. On the edge a payment writes about 35 pages, so one payment in 28 paid for
 * a checkpoint — 3–4 % of payments, the whole of their p99. The agent instead checkpoints
 * when the terminal is idle (edge/agent/walCheckpoints.ts) and keeps the in-commit
 * checkpoint only as a backstop for long runs of back-to-back payments.
 */
import { SaffronError } from '../../errors.js';
import type { Store } from '../store.js';

/** What a checkpoint did: pages in the log, and those now in the database file. */
export interface WalCheckpointResult {
  /** Whether the checkpoint could not finish (another connection was reading or writing). */
  busy: boolean;
  logPages: number;
  checkpointedPages: number;
}

function sqliteDatabase(store: Store, what: string) {
  if (store.driver.dialect !== 'sqlite')
    throw new SaffronError('SCHEMA_DIALECT', `${what} is for SQLite stores only`);
  return store.driver.database;
}

/**
 * Let a commit checkpoint the log only once it holds more than `pages` pages (SQLite's
 * `wal_autocheckpoint`; 0 never). The log file keeps the size it reached until the store is
 * closed: about `pages` × 4 KiB at most, plus one transaction.
 */
export function setWalAutocheckpoint(store: Store, pages: number): void {
  if (!Number.isSafeInteger(pages) || pages < 0)
    throw new RangeError(`WAL autocheckpoint pages must be an integer ≥ 0, got ${pages}`);
  sqliteDatabase(store, 'setWalAutocheckpoint').pragma(`wal_autocheckpoint = ${pages}`);
}

/**
 * Rows this connection has written since it opened (`total_changes()`): a figure that moves
 * with every write, so a caller can tell that nothing was written between two readings.
 */
export function sqliteChangeCount(store: Store): number {
  return sqliteDatabase(store, 'sqliteChangeCount')
    .prepare('SELECT total_changes()')
    .pluck()
    .get() as number;
}

/**
 * Copy what the log holds into the database file without waiting for anyone (`PASSIVE`).
 * Undefined while this connection is inside a transaction: a checkpoint cannot run there.
 */
export function checkpointWal(store: Store): WalCheckpointResult | undefined {
  const database = sqliteDatabase(store, 'checkpointWal');
  if (database.inTransaction) return undefined;
  const [row] = database.pragma('wal_checkpoint(PASSIVE)') as {
    busy: number;
    log: number;
    checkpointed: number;
  }[];
  return {
    busy: row!.busy !== 0,
    logPages: row!.log,
    checkpointedPages: row!.checkpointed,
  };
}
