/**
 * Compile-once queries (runtime/store/cachedQuery.ts) on SQLite: inside a transaction they
 * run directly on the connection the transaction holds, with Kysely's result shape, and are
 * part of that transaction (a rollback undoes them); outside one, and on a handle kept past
 * its transaction, they go through Kysely, which refuses a finished transaction.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeCached, openStore, type Store, type StoreHandle } from '../../runtime/index.js';

describe('compile-once queries on SQLite', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'saffron-cached-'));
    store = await openStore(join(dir, 'cached.db'));
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`.execute(store.db);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (h: StoreHandle, v: string) =>
    executeCached(h, 'test.insert', [v], () =>
      h.db.insertInto('t' as never).values({ v } as never),
    );
  const select = (h: StoreHandle, v: string) =>
    executeCached<{ id: number; v: string }>(h, 'test.select', [v], () =>
      h.db
        .selectFrom('t' as never)
        .select(['id', 'v'] as never)
        .where('v' as never, '=', v as never),
    );
  const count = async () =>
    Number((await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(store.db)).rows[0]!.n);

  it('runs on the transaction’s connection with the result Kysely gives, and rolls back with it', async () => {
    expect(store.sqliteInTransaction).toBeUndefined();
    const viaKysely = await insert(store, 'a'); // no transaction: through Kysely
    expect(viaKysely).toMatchObject({ numAffectedRows: 1n, insertId: 1n });

    const outside = await select(store, 'a'); // through Kysely
    await store.transaction(async (tx) => {
      expect(tx.sqliteInTransaction?.inTransaction).toBe(true);
      expect(await insert(tx, 'b')).toEqual({ rows: [], numAffectedRows: 1n, insertId: 2n });
      expect(await select(tx, 'b')).toEqual({ rows: [{ id: 2, v: 'b' }] });
      expect(await select(tx, 'a')).toEqual(outside);
    });
    expect(await count()).toBe(2);

    await expect(
      store.transaction(async (tx) => {
        await insert(tx, 'c');
        expect((await select(tx, 'c')).rows).toHaveLength(1);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await count()).toBe(2); // the direct insert was part of the rolled-back transaction
  });

  it('sends a handle kept past its transaction through Kysely, which refuses it', async () => {
    let kept: StoreHandle | undefined;
    await store.transaction((tx) => {
      kept = tx;
      return Promise.resolve();
    });
    await expect(insert(kept!, 'late')).rejects.toThrow(/committed|rolled back/i);
    expect(await count()).toBe(0);
  });

  it('reports a failing statement as the driver’s error', async () => {
    await expect(
      store.transaction((tx) =>
        executeCached(tx, 'test.bad', [1, null], () =>
          tx.db.insertInto('t' as never).values({ id: 1, v: null } as never),
        ),
      ),
    ).rejects.toThrow(/NOT NULL/);
  });
});
