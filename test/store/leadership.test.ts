/**
 * Leader election by advisory lock on PostgreSQL: one holder per job and schema, so two
 * deployments sharing a database (or two test schemas) each have their own leader.
 */
import { describe, expect, it } from 'vitest';
import { withAdvisoryLock, type Store } from '../../runtime/store/index.js';
import { DIALECTS } from '../support/stores.js';

const postgres = DIALECTS.find((d) => d.name === 'postgres');

const poolOf = (store: Store) => {
  const driver = store.driver;
  if (driver.dialect !== 'postgres') throw new Error('expected a PostgreSQL store');
  return driver.pool;
};

describe.runIf(postgres)('advisory-lock leadership on postgres', () => {
  it('admits one holder per job within a schema, and one per schema across schemas', async () => {
    const a = await postgres!.open();
    const b = await postgres!.open();
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const holder = withAdvisoryLock(poolOf(a.store), 'saffron:zombies', async () => {
        entered();
        await held;
        return 'held';
      });
      await inside;
      // same schema, same job: skipped; same schema, other job: runs; other schema: runs
      expect(
        await withAdvisoryLock(poolOf(a.store), 'saffron:zombies', () => Promise.resolve('x')),
      ).toBe(undefined);
      expect(
        await withAdvisoryLock(poolOf(a.store), 'saffron:cron', () => Promise.resolve('cron')),
      ).toBe('cron');
      expect(
        await withAdvisoryLock(poolOf(b.store), 'saffron:zombies', () => Promise.resolve('b')),
      ).toBe('b');
      release();
      expect(await holder).toBe('held');
      // released on the way out, also when the work throws
      await expect(
        withAdvisoryLock(poolOf(a.store), 'saffron:zombies', () => Promise.reject(new Error('no'))),
      ).rejects.toThrow('no');
      expect(
        await withAdvisoryLock(poolOf(a.store), 'saffron:zombies', () => Promise.resolve('again')),
      ).toBe('again');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
