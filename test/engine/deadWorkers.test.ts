/**
 * Workers that die and workers that are only slow: the maintenance pass declares a node dead
 * once its worker_nodes heartbeat is older than the zombie threshold and hands its tasks to
 * the next claim at once, long before their lease would run out; a live worker's heartbeat
 * renews the leases of the tasks it holds, so a task longer than one lease stays with it, and
 * aborts the step of a task it runs but no longer holds (taken over, or its PARALLEL step
 * timed out).
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import {
  claimTasks,
  inlineExecutor,
  listTasks,
  registerWorker,
  type StepExecutor,
} from '../../runtime/index.js';
import {
  definition,
  ENGINE_STEPS,
  engineFor,
  fakeClock,
  type FakeClock,
} from '../support/engine.js';
import { CLOUD_DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const ASYNC_FLOW = `
workflow_type: leased
automate_next: true
steps:
  - { name: score, type: ASYNC, function: steps.score_async }
`;

async function workerStatus(handle: TestStore, workerId: string): Promise<string | undefined> {
  const { rows } = await sql<{ status: string }>`
    SELECT status FROM worker_nodes WHERE worker_id = ${workerId}`.execute(handle.store.db);
  return rows[0]?.status;
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`dead and slow workers on ${dialect.name}`, () => {
    let handle: TestStore;
    let clock: FakeClock;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      clock = fakeClock();
      rt = engineFor(handle, { clock, runTasks: false, workerId: 'survivor' });
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });
    /** A worker that runs its tasks with `executor` and beats its heartbeat every 20 ms. */
    const taskWorker = (workerId: string, executor: StepExecutor) =>
      engineFor(handle, { clock, runTasks: false, workerId, executor, heartbeatIntervalMs: 20 });

    it('declares a worker with a stale heartbeat dead and hands its task over before the lease runs out', async () => {
      const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
      await registerWorker(
        handle.store,
        { workerId: 'killed', hostname: 'h', pid: 1, concurrency: 1, capabilities: {} },
        clock.now(),
      );
      const claimed = await claimTasks(handle.store, {
        workerId: 'killed',
        limit: 1,
        leaseMs: 300_000,
        now: clock.now(),
      });
      expect(claimed).toHaveLength(1);

      // within the threshold the node counts as alive: nothing moves
      clock.advance(5_000);
      expect(await rt.maintain({ zombieAfterMs: 8_000 })).toMatchObject({ released: 0 });
      expect(await rt.work()).toBe(0);
      expect(await workerStatus(handle, 'killed')).toBe('ACTIVE');

      clock.advance(5_000); // 10 s without a heartbeat, 290 s of lease left
      expect(await rt.maintain({ zombieAfterMs: 8_000 })).toMatchObject({ released: 1 });
      expect(await workerStatus(handle, 'killed')).toBe('DEAD');
      expect(await rt.work()).toBe(1);
      await rt.drain();
      expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED', state: { score: 10 } });
      expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
        status: 'COMPLETED',
        workerId: 'survivor',
        attempts: 2,
      });
      // a second pass finds nothing more to do
      expect(await rt.maintain({ zombieAfterMs: 8_000 })).toMatchObject({ released: 0 });
    });

    it('leaves alone the tasks of a worker that has no node row (its lease still applies)', async () => {
      const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
      await claimTasks(handle.store, {
        workerId: 'unregistered',
        limit: 1,
        leaseMs: 60_000,
        now: clock.now(),
      });
      clock.advance(30_000);
      expect(await rt.maintain({ zombieAfterMs: 8_000 })).toMatchObject({ released: 0 });
      expect(await rt.work()).toBe(0);
      clock.advance(30_001);
      expect(await rt.work()).toBe(1);
      await rt.drain();
      expect((await rt.get(wf.id)).status).toBe('COMPLETED');
    });

    it('renews the leases of a live worker, so a task longer than its lease is not taken over', async () => {
      const inline = inlineExecutor({ stepsRoot: ENGINE_STEPS });
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let entered!: () => void;
      const running = new Promise<void>((resolve) => (entered = resolve));
      const executor: StepExecutor = {
        async call(functionPath, state, context) {
          entered();
          await gate;
          return inline.call(functionPath, state, context);
        },
        close: () => inline.close(),
      };
      const slow = taskWorker('slow', executor);
      try {
        const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
        const service = slow.serve({ leaseMs: 60_000, maintenance: false, pollMs: 20 });
        await running;
        // the task runs past its first lease; the worker's heartbeat keeps pushing it on
        for (let i = 0; i < 3; i++) {
          clock.advance(45_000);
          // renewed after the clock moved: the lease is a whole lease from the new now
          const renewed = clock.now().getTime() + 60_000;
          await expect
            .poll(async () => (await listTasks(handle.store, wf.id))[0]?.leaseExpiresAt?.getTime())
            .toBeGreaterThanOrEqual(renewed);
        }
        expect(await rt.maintain({ zombieAfterMs: 8_000 })).toMatchObject({ released: 0 });
        expect(await rt.work()).toBe(0);
        open();
        await expect.poll(async () => (await rt.get(wf.id)).status).toBe('COMPLETED');
        await service.stop();
        expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
          status: 'COMPLETED',
          workerId: 'slow',
          attempts: 1,
          leaseExpiresAt: null,
        });
        expect(await workerStatus(handle, 'slow')).toBe('STOPPED');
      } finally {
        open();
        await slow.close();
      }
    });

    /** An executor whose tasks wait for their signal, as a step blocked on the network would. */
    function waitingExecutor() {
      let entered!: () => void;
      const running = new Promise<void>((resolve) => (entered = resolve));
      const seen: { reason?: unknown; signalsRead: number } = { signalsRead: 0 };
      const executor: StepExecutor = {
        async call(_functionPath, state, context) {
          seen.signalsRead++;
          const { signal } = context;
          entered();
          // bounded, so that a worker that never aborts fails the test instead of hanging it
          await new Promise<void>((resolve) => {
            signal.addEventListener('abort', () => resolve());
            setTimeout(resolve, 10_000).unref();
          });
          seen.reason = signal.reason;
          return { kind: 'returned', state: { ...state, score: -1 } };
        },
        close: () => Promise.resolve(),
      };
      return { executor, running, seen };
    }

    /** The waiting task's step was aborted as lost, and read its signal once. */
    async function expectLost(seen: { reason?: unknown; signalsRead: number }) {
      await expect.poll(() => seen.reason, { timeout: 5_000 }).toBeDefined();
      expect(seen.reason).toMatchObject({ name: 'StepError', code: 'TASK_LOST' });
      expect((seen.reason as Error).message).toMatch(/no longer this worker's/);
      expect(seen.signalsRead).toBe(1);
    }

    it('aborts the signal of a task taken over from a live worker, and records nothing of it', async () => {
      const { executor, running, seen } = waitingExecutor();
      const partitioned = taskWorker('partitioned', executor);
      try {
        const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
        const service = partitioned.serve({ leaseMs: 60_000, maintenance: false, pollMs: 20 });
        await running;
        // its lease ran out while its heartbeats did not reach the database; another worker
        // takes the task over and finishes it
        await sql`UPDATE tasks SET lease_expires_at = ${clock.now().toISOString()}::timestamptz
          WHERE workflow_id = ${wf.id}`.execute(handle.store.db);
        clock.advance(1);
        expect(await rt.work()).toBe(1);
        await rt.drain();
        expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED', state: { score: 10 } });
        // the partitioned worker's next heartbeat finds the task gone and aborts its step
        await expectLost(seen);
        await service.stop();
        // what the aborted step returned was not recorded
        expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
          status: 'COMPLETED',
          workerId: 'survivor',
          attempts: 2,
          result: { score: 10 },
        });
        expect(await rt.get(wf.id)).toMatchObject({ state: { score: 10 } });
      } finally {
        await partitioned.close();
      }
    });

    it('drops a task claimed ahead that was taken over while it waited, without running it', async () => {
      const { executor, running, seen } = waitingExecutor();
      const partitioned = taskWorker('partitioned', executor);
      try {
        const def = await definition(ASYNC_FLOW);
        const started = [await rt.start(def, { amount: 1 }), await rt.start(def, { amount: 2 })];
        const service = partitioned.serve({
          batch: 1,
          prefetch: 1,
          leaseMs: 60_000,
          maintenance: false,
          pollMs: 20,
        });
        await running;
        // both leases ran out: the running task and the one waiting behind it
        await sql`UPDATE tasks SET lease_expires_at = ${clock.now().toISOString()}::timestamptz`.execute(
          handle.store.db,
        );
        clock.advance(1);
        expect(await rt.work()).toBe(2);
        await rt.drain();
        await expectLost(seen);
        await service.stop();
        // the waiting task never reached the executor, and nothing of either run was recorded
        expect(seen.signalsRead).toBe(1);
        expect(service.tasksRun).toBe(1);
        for (const [i, wf] of started.entries())
          expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
            status: 'COMPLETED',
            workerId: 'survivor',
            result: { score: 2 * (i + 1) },
          });
      } finally {
        await partitioned.close();
      }
    });

    it('aborts the signal of a task whose PARALLEL step timed out', async () => {
      const { executor, running, seen } = waitingExecutor();
      const busy = taskWorker('busy', executor);
      try {
        const wf = await rt.start(
          await definition(`
workflow_type: fan_timeout
automate_next: true
steps:
  - name: fan
    type: PARALLEL
    timeout_seconds: 5
    allow_partial_success: true
    tasks:
      - { name: slow, function_path: steps.score_async }
`),
          { amount: 5 },
        );
        const service = busy.serve({ leaseMs: 60_000, maintenance: false, pollMs: 20 });
        await running;
        clock.advance(5_001);
        expect((await rt.maintain()).timeouts).toBe(1);
        await rt.drain();
        expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED' });
        await expectLost(seen);
        await service.stop();
        expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
          status: 'FAILED',
          workerId: 'busy',
        });
        expect(String((await listTasks(handle.store, wf.id))[0]!.error)).toContain(
          'timed out after 5 s',
        );
      } finally {
        await busy.close();
      }
    });

    it('gives up a claim whose answer was lost, so a live worker does not sit on a task it never ran', async () => {
      const idle = engineFor(handle, {
        clock,
        runTasks: false,
        workerId: 'idle',
        heartbeatIntervalMs: 20,
      });
      try {
        const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
        const service = idle.serve({ leaseMs: 300_000, maintenance: false, tasks: false });
        // the claim committed under idle's id, but idle never saw the answer
        const lost = await claimTasks(handle.store, {
          workerId: 'idle',
          limit: 1,
          leaseMs: 300_000,
          now: clock.now(),
        });
        expect(lost).toHaveLength(1);
        const lease = (await listTasks(handle.store, wf.id))[0]!.leaseExpiresAt!.getTime();
        // a young claim may still have its answer on the way: left alone, and not renewed
        clock.advance(10_000);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await listTasks(handle.store, wf.id))[0]!.leaseExpiresAt!.getTime()).toBe(lease);
        expect(await rt.work()).toBe(0);
        // past the grace, idle's heartbeat ends the lease and any worker takes the task
        clock.advance(30_000);
        await expect
          .poll(async () => (await listTasks(handle.store, wf.id))[0]!.leaseExpiresAt!.getTime())
          .toBeLessThanOrEqual(clock.now().getTime());
        expect(await rt.work()).toBe(1);
        await rt.drain();
        expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED', state: { score: 10 } });
        await service.stop();
      } finally {
        await idle.close();
      }
    });
  });
}
