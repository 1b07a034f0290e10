/**
 * Step durability on SQLite: with `boundaries`, the intermediate steps of a running workflow
 * commit with a deferred flush (`synchronous=NORMAL` for that transaction only), while its
 * creation, its end, a wait and every commit with side rows flush before they are
 * acknowledged; `every-step` flushes everything. A deferred commit survives a SIGKILL of the
 * process (what it does not promise to survive is a power cut, which a test cannot cut).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store, TransactionOptions } from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const sqlite = DIALECTS.find((d) => d.name === 'sqlite')!;

const FLOW = `
workflow_type: four_steps
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: two, type: STANDARD, function: steps.mark }
  - { name: three, type: STANDARD, function: steps.mark }
  - { name: four, type: STANDARD, function: steps.mark }
`;

const WAITS = `
workflow_type: waits
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: ask, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: two, type: STANDARD, function: steps.mark }
`;

/** `store` with every transaction's flush recorded. */
function recording(store: Store): { store: Store; flushes: string[] } {
  const flushes: string[] = [];
  return {
    flushes,
    store: {
      ...store,
      transaction: (fn, options?: TransactionOptions) => {
        flushes.push(options?.flush ?? 'durable');
        return store.transaction(fn, options);
      },
    },
  };
}

const synchronous = (store: Store) =>
  store.driver.dialect === 'sqlite'
    ? store.driver.database.pragma('synchronous', { simple: true })
    : null;

describe('step durability on SQLite', () => {
  let handle: TestStore;
  beforeEach(async () => {
    handle = await openWithSchema(sqlite);
  });
  afterEach(async () => {
    await handle.close();
  });

  it('a deferred transaction commits with synchronous=NORMAL and leaves the store at FULL', async () => {
    const { store } = handle;
    expect(synchronous(store)).toBe(2); // FULL
    const inside = await store.transaction(() => Promise.resolve(synchronous(store)), {
      flush: 'deferred',
    });
    expect(inside).toBe(1); // NORMAL
    expect(synchronous(store)).toBe(2);
    // also when the transaction fails
    await expect(
      store.transaction(
        () => {
          throw new Error('boom');
        },
        { flush: 'deferred' },
      ),
    ).rejects.toThrow('boom');
    expect(synchronous(store)).toBe(2);
    expect(await store.transaction(() => Promise.resolve(synchronous(store)))).toBe(2);
  });

  it('boundaries: creation and end flush, the steps in between are deferred', async () => {
    const spy = recording(handle.store);
    const rt = engineFor({ ...handle, store: spy.store }, { stepDurability: 'boundaries' });
    const wf = await rt.start(await definition(FLOW));
    expect(wf.status).toBe('COMPLETED');
    expect(wf.state.visited).toEqual(['one', 'two', 'three', 'four']);
    // start, then steps one to three go on (ACTIVE), step four ends it
    expect(spy.flushes).toEqual(['durable', 'deferred', 'deferred', 'deferred', 'durable']);
    await rt.close();
  });

  it('boundaries: a wait flushes, and so does the resumed run to its end', async () => {
    const spy = recording(handle.store);
    const rt = engineFor({ ...handle, store: spy.store }, { stepDurability: 'boundaries' });
    const wf = await rt.start(await definition(WAITS));
    expect(wf.status).toBe('WAITING_HUMAN_INPUT');
    expect(spy.flushes).toEqual(['durable', 'deferred', 'durable']);
    const done = await rt.resume(wf.id, { approved: true, by: 'cashier' });
    expect(done.status).toBe('COMPLETED');
    expect(spy.flushes.slice(3).at(-1)).toBe('durable');
    await rt.close();
  });

  it('every-step (the default) flushes every commit', async () => {
    const spy = recording(handle.store);
    const rt = engineFor({ ...handle, store: spy.store });
    await rt.start(await definition(FLOW));
    expect(spy.flushes).toHaveLength(5);
    expect(new Set(spy.flushes)).toEqual(new Set(['durable']));
    await rt.close();
  });

  it('a deferred step commit survives a SIGKILL of the process', async () => {
    const rt = engineFor(handle);
    const wf = await rt.start(await definition(FLOW), {}, { run: false });
    const worker = fileURLToPath(new URL('../support/crashWorker.ts', import.meta.url));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', worker, handle.location, wf.id, 'after-commit', 'three', 'boundaries'],
        { timeout: 60_000 },
        (error) => resolve((error as { signal?: NodeJS.Signals } | null)?.signal ?? null),
      );
    });
    expect(signal).toBe('SIGKILL');
    // steps one to three committed deferred, and the process died right after three's commit
    const after = await rt.get(wf.id);
    expect(after.state.visited).toEqual(['one', 'two', 'three']);
    expect(after.status).toBe('ACTIVE');
    const done = await rt.runUntilSettled(wf.id);
    expect(done.state.visited).toEqual(['one', 'two', 'three', 'four']);
    await rt.close();
  });
});
