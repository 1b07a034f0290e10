/**
 * Step durability on SQLite: with `boundaries`, the commits of the intermediate steps of a
 * running workflow are held and written with the workflow's next commit that flushes (its end,
 * a wait, side rows), when the drive ends, or after the hold window with a deferred flush
 * (`synchronous=NORMAL` for that transaction only). So is its creation when it is driven at
 * once and has no idempotency key; a keyed or undriven creation flushes on its own.
 * `every-step` writes and flushes every commit. A SIGKILL (or a power cut, which a test
 * cannot cut) takes a running workflow back to its last written commit, and the steps since
 * run again; a workflow whose first drive had not answered is not there at all.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createGroupCommitQueue,
  HOLD_MS,
  type StepDurability,
} from '../../actors/runtime/groupCommitQueue.js';
import { newPlan } from '../../actors/runtime/commitPlan.js';
import {
  ConflictError,
  getWorkflow,
  type Store,
  type TransactionOptions,
} from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { openWithSchema, type TestStore, EDGE_DIALECT } from '../support/stores.js';

const sqlite = EDGE_DIALECT;

const FLOW = `
workflow_type: four_steps
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: two, type: STANDARD, function: steps.mark }
  - { name: three, type: STANDARD, function: steps.mark }
  - { name: four, type: STANDARD, function: steps.mark }
`;

const SLOW_SECOND = `
workflow_type: slow_second
automate_next: true
initial_state: { sleep_ms: 1500 }
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: two, type: STANDARD, function: steps.slow }
  - { name: three, type: STANDARD, function: steps.mark }
`;

const STEPWISE = `
workflow_type: stepwise
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: two, type: STANDARD, function: steps.mark }
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

/** Run workflow `id` of `location` in a child process that SIGKILLs itself after `step`'s commit. */
function killedAfterCommit(
  location: string,
  step: string,
  id: string,
  durability?: StepDurability,
): Promise<NodeJS.Signals | null> {
  const worker = fileURLToPath(new URL('../support/crashWorker.ts', import.meta.url));
  const args = ['--import', 'tsx', worker, location, id, 'after-commit', step];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      durability ? [...args, durability] : args,
      { timeout: 60_000 },
      (error) => resolve((error as { signal?: NodeJS.Signals } | null)?.signal ?? null),
    );
  });
}

/** The commit of an intermediate step `name` of workflow `id` at `version`. */
const stepPlan = (id: string, version: number, name: string) =>
  newPlan(
    id,
    version,
    {
      status: 'ACTIVE',
      currentStepIndex: version,
      currentStep: name,
      state: { visited: [name] },
      actorSnapshot: {},
    },
    'keep',
  );

/** The better-sqlite3 database under `store`. */
const driverOf = (store: Store) => {
  if (store.driver.dialect !== 'sqlite') throw new Error('not SQLite');
  return store.driver.database;
};

/** Rows inserted, updated or deleted on `db`'s connection since it was opened. */
const totalChanges = (db: ReturnType<typeof driverOf>) =>
  Number((db.prepare('SELECT total_changes() AS n').get() as { n: number }).n);

/** The commit that creates workflow `id`, driven at once by this node (so it may be held). */
const creationPlan = (id: string, now: Date) => {
  const plan = newPlan(
    id,
    0,
    { status: 'ACTIVE', currentStepIndex: 0, currentStep: null, state: {}, actorSnapshot: {} },
    { workerId: 'node-1', currentStep: null, at: now },
  );
  plan.created = { id, workflowType: 'four_steps', status: 'ACTIVE', state: {} };
  return plan;
};

const synchronous = (store: Store) =>
  store.driver.dialect === 'sqlite'
    ? store.driver.database.pragma('synchronous', { simple: true })
    : null;

describe('step durability on SQLite', () => {
  let handle: TestStore;
  beforeEach(async () => {
    handle = await openWithSchema(sqlite);
  });
  /**
   * A runtime with `boundaries` over a store that records its flushes. The hold window is
   * longer than any pause between steps on a loaded machine, so what a test sees written is
   * what the boundaries wrote, not the clock; the test of the window passes the default.
   */
  const boundaries = (stepHoldMs = 60_000) => {
    const spy = recording(handle.store);
    return {
      spy,
      rt: engineFor({ ...handle, store: spy.store }, { stepDurability: 'boundaries', stepHoldMs }),
    };
  };
  /** A FLOW workflow, created and not run (the runtime that created it is closed). */
  const createdFlow = async () => {
    const rt = engineFor(handle);
    const wf = await rt.start(await definition(FLOW), {}, { run: false });
    await rt.close();
    return wf;
  };
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

  it('boundaries: the creation and the steps in between are written with the end, once', async () => {
    const { spy, rt } = boundaries();
    const wf = await rt.start(await definition(FLOW));
    expect(wf.status).toBe('COMPLETED');
    expect(wf.state.visited).toEqual(['one', 'two', 'three', 'four']);
    // one transaction: the creation and steps one to three (held), and four (the end)
    expect(spy.flushes).toEqual(['durable']);
    const stored = await rt.get(wf.id);
    expect(stored.version).toBe(wf.version);
    expect(stored.state.visited).toEqual(['one', 'two', 'three', 'four']);
    const audit = await rt.audit(wf.id);
    expect(audit.filter((a) => a.eventType === 'STEP_EXECUTED').map((a) => a.stepName)).toEqual([
      'one',
      'two',
      'three',
      'four',
    ]);
    await rt.close();
  });

  it('boundaries: a creation and the commits after it are one row insert, with no heartbeat row', async () => {
    const { rt } = boundaries();
    const db = driverOf(handle.store);
    const before = totalChanges(db);
    const wf = await rt.start(await definition(FLOW));
    expect(wf.status).toBe('COMPLETED');
    // every row change the transaction made: the workflow row once, and its own rows — no
    // UPDATE of the row per step, no heartbeat inserted and deleted again
    const rows = (table: 'workflow_audit_log' | 'workflow_metrics' | 'workflow_execution_logs') =>
      Number(
        (
          db.prepare(`SELECT count(*) AS n FROM ${table} WHERE workflow_id = ?`).get(wf.id) as {
            n: number;
          }
        ).n,
      );
    const own =
      rows('workflow_audit_log') + rows('workflow_metrics') + rows('workflow_execution_logs');
    expect(own).toBeGreaterThan(4);
    expect(totalChanges(db) - before).toBe(1 + own);
    expect(await rt.get(wf.id)).toMatchObject({ version: 4, status: 'COMPLETED' });
    const beats = await handle.store.db.selectFrom('workflow_heartbeats').selectAll().execute();
    expect(beats).toEqual([]);
    await rt.close();
  });

  it('boundaries: when the folded write fails, its commits are written one by one, so only the one at fault fails', async () => {
    const queue = createGroupCommitQueue(handle.store, 64, 1, 'boundaries', 10_000);
    const now = new Date();
    const id = randomUUID();
    const created = creationPlan(id, now);
    expect(await queue.commit(created, now)).toBe(0); // held
    expect(await queue.commit(stepPlan(id, 0, 'one'), now)).toBe(1); // held
    const end = (version: number, fail: boolean) => {
      const plan = newPlan(
        id,
        version,
        {
          status: 'COMPLETED',
          currentStepIndex: 1,
          currentStep: null,
          state: { visited: ['one'] },
          actorSnapshot: {},
        },
        'delete',
      );
      plan.outbox.push(() =>
        fail ? Promise.reject(new Error('outbox refused')) : Promise.resolve(),
      );
      return plan;
    };
    await expect(queue.commit(end(1, true), now)).rejects.toThrow('outbox refused');
    // the creation and step one stand, as they would have unfolded; the end wrote nothing
    expect(await getWorkflow(handle.store, id)).toMatchObject({
      version: 1,
      status: 'ACTIVE',
      state: { visited: ['one'] },
    });
    const beats = await handle.store.db
      .selectFrom('workflow_heartbeats')
      .select('workflow_id')
      .execute();
    expect(beats).toEqual([{ workflow_id: id }]);
    // and the end, sent again, commits on its own
    expect(await queue.commit(end(1, false), now)).toBe(2);
    expect(await getWorkflow(handle.store, id)).toMatchObject({ version: 2, status: 'COMPLETED' });
  });

  it('boundaries: an end that does not follow what was held is not folded, and conflicts', async () => {
    const queue = createGroupCommitQueue(handle.store, 64, 1, 'boundaries', 10_000);
    const now = new Date();
    const id = randomUUID();
    const created = creationPlan(id, now);
    await queue.commit(created, now);
    await queue.commit(stepPlan(id, 0, 'one'), now);
    // version 3 is not the version step one leaves (1)
    const stale = newPlan(
      id,
      3,
      { status: 'COMPLETED', currentStepIndex: 1, currentStep: null, state: {}, actorSnapshot: {} },
      'delete',
    );
    await expect(queue.commit(stale, now)).rejects.toBeInstanceOf(ConflictError);
    expect(await getWorkflow(handle.store, id)).toMatchObject({ version: 1, status: 'ACTIVE' });
  });

  it('boundaries: a wait flushes what was held, and so does the resumed run to its end', async () => {
    const { spy, rt } = boundaries();
    const wf = await rt.start(await definition(WAITS));
    expect(wf.status).toBe('WAITING_HUMAN_INPUT');
    expect(spy.flushes).toEqual(['durable']);
    expect((await rt.get(wf.id)).state.visited).toEqual(['one']);
    const done = await rt.resume(wf.id, { approved: true, by: 'cashier' });
    expect(done.status).toBe('COMPLETED');
    // the answer settles the wait's deadline timer (a side row): nothing of it is held
    expect(new Set(spy.flushes.slice(1))).toEqual(new Set(['durable']));
    await rt.close();
  });

  it('boundaries: a drive that ends with its workflow ACTIVE writes and flushes its step before answering', async () => {
    const { spy, rt } = boundaries();
    const wf = await rt.start(await definition(STEPWISE));
    expect(wf.status).toBe('ACTIVE');
    expect(wf.state.visited).toEqual(['one']);
    expect(spy.flushes).toEqual(['durable']);
    expect(await rt.get(wf.id)).toMatchObject({ version: wf.version, state: { visited: ['one'] } });
    await rt.close();
  });

  it('boundaries: a step that takes long does not keep the steps before it from the database', async () => {
    const { spy, rt } = boundaries(HOLD_MS);
    const running = rt.start(await definition(SLOW_SECOND));
    // the creation and step one's commit are held while step two sleeps, and written when
    // the window ends
    let id: string | undefined;
    await vi.waitFor(
      async () => {
        const rows = await handle.store.db
          .selectFrom('workflow_executions')
          .select(['id', 'state'])
          .execute();
        const state = handle.store.codec.parseJson(rows[0]?.state) as { visited?: string[] } | null;
        expect(state?.visited).toEqual(['one']);
        id = rows[0]!.id;
      },
      { timeout: 1200, interval: 20 },
    );
    expect(spy.flushes).toEqual(['durable']);
    const done = await running;
    expect(done.id).toBe(id);
    expect(done.state).toMatchObject({ visited: ['one', 'three'], slept: ['two'] });
    expect(spy.flushes).toEqual(['durable', 'durable']);
    await rt.close();
  });

  it('a hold window that is not a whole number of milliseconds a timer can keep is refused', () => {
    for (const stepHoldMs of [0, -5, 1.5, Number.NaN, 2 ** 31])
      expect(() => engineFor(handle, { stepDurability: 'boundaries', stepHoldMs })).toThrow(
        /stepHoldMs must be a whole number of milliseconds from 1 to 2147483647/,
      );
  });

  it('boundaries: a start with an idempotency key, or not driven, flushes its creation on its own', async () => {
    const { spy, rt } = boundaries();
    const flow = await definition(FLOW);
    const keyed = await rt.start(flow, {}, { idempotencyKey: 'pay-1' });
    expect(keyed.status).toBe('COMPLETED');
    expect(spy.flushes).toEqual(['durable', 'durable']);
    // the same key again: the first workflow, found before anything of a second one runs
    expect((await rt.start(flow, {}, { idempotencyKey: 'pay-1' })).id).toBe(keyed.id);
    expect(spy.flushes).toHaveLength(2);
    const idle = await rt.start(flow, {}, { run: false });
    expect(spy.flushes).toEqual(['durable', 'durable', 'durable']);
    // the caller holds its id: it is in the database
    expect(await rt.get(idle.id)).toMatchObject({ status: 'ACTIVE', version: 0 });
    const count = await handle.store.db
      .selectFrom('workflow_executions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(2);
    await rt.close();
  });

  it('boundaries: a SIGKILL before a new workflow answers leaves nothing of it', async () => {
    // the start is held with steps one to three; the process dies right after three's commit
    expect(await killedAfterCommit(handle.location, 'three', `start:${FLOW}`, 'boundaries')).toBe(
      'SIGKILL',
    );
    const rows = await handle.store.db.selectFrom('workflow_executions').select('id').execute();
    expect(rows).toEqual([]);
    // the same child under every-step leaves the workflow at its last step commit
    expect(await killedAfterCommit(handle.location, 'three', `start:${FLOW}`)).toBe('SIGKILL');
    const rt = engineFor(handle);
    const [left] = await rt.list({});
    expect(left).toMatchObject({ status: 'ACTIVE', state: { visited: ['one', 'two', 'three'] } });
    await rt.close();
  });

  it("boundaries: a held commit that cannot be written fails the workflow's next commit", async () => {
    const wf = await createdFlow();
    const queue = createGroupCommitQueue(handle.store, 64, 1, 'boundaries', 10);
    const step = (version: number, name: string) => stepPlan(wf.id, version, name);
    // held: acknowledged at once with the version it will have
    expect(await queue.commit(step(wf.version, 'one'), new Date())).toBe(wf.version + 1);
    // someone else writes the row meanwhile; the held commit is written after 10 ms and conflicts
    await handle.store.db
      .updateTable('workflow_executions')
      .set({ version: wf.version + 5 })
      .where('id', '=', wf.id)
      .execute();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(queue.commit(step(wf.version + 1, 'two'), new Date())).rejects.toBeInstanceOf(
      ConflictError,
    );
    // reported once: the next commit is judged on its own (it is held again)
    expect(await queue.commit(step(wf.version + 5, 'three'), new Date())).toBe(wf.version + 6);
    await queue.release(wf.id);
    const row = await handle.store.db
      .selectFrom('workflow_executions')
      .select(['version', 'current_step'])
      .where('id', '=', wf.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ version: wf.version + 6, current_step: 'three' });
  });

  it("boundaries: a drive ending while the window's write of its steps is under way waits for that write", async () => {
    const wf = await createdFlow();
    let written = 0;
    const slow: Store = {
      ...handle.store,
      transaction: async (fn, options) => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        const result = await handle.store.transaction(fn, options);
        written++;
        return result;
      },
    };
    const queue = createGroupCommitQueue(slow, 64, 1, 'boundaries', 10);
    const plan = stepPlan(wf.id, wf.version, 'one');
    await queue.commit(plan, new Date());
    // the window has sent the held commit on its way; its transaction is still running
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written).toBe(0);
    await queue.release(wf.id);
    expect(written).toBe(1);
    // and so does releasing everything (the runtime's close)
    await queue.commit({ ...plan, expectedVersion: wf.version + 1 }, new Date());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written).toBe(1);
    await queue.release();
    expect(written).toBe(2);
  });

  it('every-step (the default) flushes every commit', async () => {
    const spy = recording(handle.store);
    const rt = engineFor({ ...handle, store: spy.store });
    await rt.start(await definition(FLOW));
    expect(spy.flushes).toHaveLength(5);
    expect(new Set(spy.flushes)).toEqual(new Set(['durable']));
    await rt.close();
  });

  it('a SIGKILL loses the held steps of a running workflow, and they run again', async () => {
    const rt = engineFor(handle);
    const wf = await rt.start(await definition(FLOW), {}, { run: false });
    expect(await killedAfterCommit(handle.location, 'three', wf.id, 'boundaries')).toBe('SIGKILL');
    // steps one to three were acknowledged (held) and the process died right after three's
    const after = await rt.get(wf.id);
    expect(after.version).toBe(wf.version);
    expect(after.state.visited).toBeUndefined();
    expect(after.status).toBe('ACTIVE');
    const done = await rt.runUntilSettled(wf.id);
    expect(done.state.visited).toEqual(['one', 'two', 'three', 'four']);
    await rt.close();
  });

  it('every-step: a step commit survives a SIGKILL of the process', async () => {
    const rt = engineFor(handle);
    const wf = await rt.start(await definition(FLOW), {}, { run: false });
    expect(await killedAfterCommit(handle.location, 'three', wf.id)).toBe('SIGKILL');
    const after = await rt.get(wf.id);
    expect(after.state.visited).toEqual(['one', 'two', 'three']);
    expect(after.status).toBe('ACTIVE');
    await rt.close();
  });
});
