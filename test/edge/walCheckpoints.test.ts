/**
 * The agent's idle-time checkpoints of its SQLite log (edge/agent/walCheckpoints.ts), on a
 * real database file: the backstop is set, a look checkpoints only after a whole period
 * without a write, a checkpoint copies the log's pages into the database file, nothing runs
 * inside an open transaction, and `stop()` leaves nothing scheduled. Timers are fired by hand.
 */
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createWalCheckpoints,
  WAL_BACKSTOP_PAGES,
  type WalCheckpointEvent,
} from '../../edge/index.js';
import {
  checkpointWal,
  openStore,
  setWalAutocheckpoint,
  type Store,
  asEdge,
} from '../../runtime/index.js';
import {
  eventLog,
  manualTimers,
  openEdgeStore,
  type EdgeStoreHandle,
} from '../support/edgeComponents.js';

/** Write `rows` rows of 2 KB into a scratch table (two to a 4 KiB page). */
async function write(store: Store, rows: number): Promise<void> {
  await store.transaction(async (tx) => {
    await sql`CREATE TABLE IF NOT EXISTS scratch (id INTEGER PRIMARY KEY, v TEXT)`.execute(tx.db);
    for (let i = 0; i < rows; i++)
      await sql`INSERT INTO scratch (v) VALUES (${'x'.repeat(2000)})`.execute(tx.db);
  });
}

const autocheckpoint = (store: Store) =>
  sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`
    .execute(store.db)
    .then((r) => r.rows[0]!.wal_autocheckpoint);

describe('idle-time WAL checkpoints of the edge store', () => {
  let edge: EdgeStoreHandle;
  beforeEach(async () => {
    edge = await openEdgeStore();
  });
  afterEach(() => edge.close());

  it('sets the backstop at start and checkpoints only after a whole period without a write', async () => {
    const timers = manualTimers();
    const log = eventLog<WalCheckpointEvent>();
    const wal = createWalCheckpoints({ store: edge.store, timers, onEvent: log.push });
    expect(await autocheckpoint(edge.store)).toBe(1000); // SQLite's default
    wal.start();
    expect(await autocheckpoint(edge.store)).toBe(WAL_BACKSTOP_PAGES);
    expect(timers.pending()).toHaveLength(1);

    await write(edge.store, 200);
    const before = statSync(edge.file).size;
    timers.fire(); // the first look sees writes: not idle
    expect(log.all('edge.wal.checkpointed')).toHaveLength(0);
    await write(edge.store, 10);
    timers.fire(); // written to again since: still not idle
    expect(log.all('edge.wal.checkpointed')).toHaveLength(0);
    expect(statSync(edge.file).size).toBe(before); // everything is still in the log

    timers.fire(); // a whole period without a write: checkpoint
    const [done] = log.all('edge.wal.checkpointed');
    expect(done?.result.busy).toBe(false);
    expect(done?.result.logPages).toBeGreaterThan(100); // two rows a page
    expect(done?.result.checkpointedPages).toBe(done?.result.logPages);
    expect(statSync(edge.file).size).toBeGreaterThan(before + 200 * 2000);

    timers.fire(); // nothing new: no second checkpoint
    expect(log.all('edge.wal.checkpointed')).toHaveLength(1);
    await write(edge.store, 1);
    timers.fire();
    timers.fire();
    expect(log.all('edge.wal.checkpointed')).toHaveLength(2);

    wal.stop();
    expect(timers.pending()).toHaveLength(0);
    wal.stop(); // idempotent
  });

  it('does not checkpoint inside an open transaction', async () => {
    const wal = createWalCheckpoints({ store: edge.store, timers: manualTimers() });
    await write(edge.store, 5);
    await edge.store.transaction(async (tx) => {
      await sql`SELECT 1`.execute(tx.db);
      expect(wal.check()).toBeUndefined(); // first look
      expect(wal.check()).toBeUndefined(); // idle, but a transaction is open
      expect(checkpointWal(edge.store)).toBeUndefined();
    });
    expect(wal.check()).toMatchObject({ busy: false }); // idle and outside: checkpointed
  });

  it('reports a failing look and keeps looking', async () => {
    const timers = manualTimers();
    const log = eventLog<WalCheckpointEvent>();
    const other = asEdge(await openStore(`${edge.file}.other`));
    const wal = createWalCheckpoints({ store: other, timers, onEvent: log.push });
    wal.start();
    await other.close(); // every look now fails: the database is closed
    timers.fire();
    expect(log.all('edge.wal.failed')).toHaveLength(1);
    expect(timers.pending()).toHaveLength(1);
    wal.stop();
  });

  it('refuses stores that are not SQLite and bad settings', () => {
    const fake = { driver: { dialect: 'postgres' } } as unknown as Store;
    expect(() => checkpointWal(fake)).toThrow(/SQLite stores only/);
    expect(() => setWalAutocheckpoint(edge.store, -1)).toThrow(RangeError);
    expect(() =>
      createWalCheckpoints({ store: edge.store, timers: manualTimers(), idleMs: 0 }),
    ).toThrow(RangeError);
    expect(() =>
      createWalCheckpoints({ store: edge.store, timers: manualTimers(), backstopPages: 1.5 }),
    ).toThrow(/backstopPages/); // at creation: the agent assembles its parts before starting any
  });
});
