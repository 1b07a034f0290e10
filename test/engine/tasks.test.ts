/**
 * ASYNC and PARALLEL steps through the tasks table: dispatch in the step's commit, claims,
 * merges in declaration order with each strategy, partial success, retries with backoff,
 * lease expiry, and exactly-once application with two runtimes racing — on every dialect.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { claimTasks, inlineExecutor, listTasks, type StepExecutor } from '../../runtime/index.js';
import {
  definition,
  ENGINE_STEPS,
  engineFor,
  fakeClock,
  type FakeClock,
} from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const parallel = (extra: string) => `
workflow_type: fan_out
automate_next: true
steps:
  - name: fan
    type: PARALLEL
    tasks:
      - { name: first, function_path: steps.task_a }
      - { name: second, function_path: steps.task_b }
      - { name: third, function_path: steps.task_c }
${extra}
  - { name: after, type: STANDARD, function: steps.mark }
`;

/** An executor whose task bodies wait at a gate: `entered` resolves when one is running. */
function gatedExecutor() {
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
  return { executor, entered: running, open };
}

/**
 * An executor whose task bodies wait at one gate, counting how many run at once: `reached(n)`
 * resolves when `n` bodies have entered.
 */
function countingExecutor() {
  const inline = inlineExecutor({ stepsRoot: ENGINE_STEPS });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let entered = 0;
  let running = 0;
  let most = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const executor: StepExecutor = {
    async call(functionPath, state, context) {
      entered++;
      most = Math.max(most, ++running);
      for (const w of waiters) if (entered >= w.n) w.resolve();
      try {
        await gate;
        return await inline.call(functionPath, state, context);
      } finally {
        running--;
      }
    },
    close: () => inline.close(),
  };
  return {
    executor,
    open,
    reached: (n: number) =>
      new Promise<void>((resolve) => (entered >= n ? resolve() : waiters.push({ n, resolve }))),
    most: () => most,
  };
}

const ASYNC_FLOW = `
workflow_type: gated
automate_next: true
steps:
  - { name: score, type: ASYNC, function: steps.score_async }
`;

for (const dialect of DIALECTS) {
  describe(`tasks on ${dialect.name}`, () => {
    let handle: TestStore;
    let clock: FakeClock;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      clock = fakeClock();
      rt = engineFor(handle, { clock, runTasks: false, workerId: 'worker-a' });
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });
    /** Another worker of the same store, running its tasks with `executor`. */
    const workerWith = (workerId: string, executor: StepExecutor) =>
      engineFor(handle, { clock, runTasks: false, workerId, executor });
    /** `workflowId`'s task was finished here on its second attempt, and recorded once. */
    async function expectRecordedHere(workflowId: string) {
      expect((await listTasks(handle.store, workflowId))[0]).toMatchObject({
        status: 'COMPLETED',
        workerId: 'worker-a',
        attempts: 2,
      });
      const trail = (await rt.audit(workflowId)).map((e) => e.eventType);
      expect(trail.filter((e) => e === 'TASK_COMPLETED')).toHaveLength(1);
      expect(trail.filter((e) => e === 'STEP_EXECUTED')).toHaveLength(1);
    }
    /**
     * Let the 60 s leases of `slow`'s `count` tasks run out, take them over and finish them
     * here, then let `slow`'s own runs (still at their gate) end: it runs `count` too.
     */
    async function takeOver(slow: Runtime, late: Promise<number>, open: () => void, count: number) {
      clock.advance(60_001);
      expect(await rt.work()).toBe(count);
      await rt.drain();
      open();
      expect(await late).toBe(count);
      await slow.close();
    }

    it('queues an ASYNC step in its commit, waits in PENDING_ASYNC, and resumes when a worker runs it', async () => {
      const def = await definition(`
workflow_type: async_flow
automate_next: true
steps:
  - { name: score, type: ASYNC, function: steps.score_async }
  - { name: after, type: STANDARD, function: steps.mark }
`);
      const wf = await rt.start(def, { amount: 21 });
      expect(wf.status).toBe('PENDING_ASYNC');
      const queued = await listTasks(handle.store, wf.id);
      expect(queued).toMatchObject([
        { stepName: 'score', functionPath: 'steps.score_async', status: 'PENDING' },
      ]);
      expect(await rt.work()).toBe(1);
      await rt.drain();
      const done = await rt.get(wf.id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: { amount: 21, score: 42, visited: ['after'] },
      });
      const [task] = await listTasks(handle.store, wf.id);
      expect(task).toMatchObject({
        status: 'COMPLETED',
        workerId: 'worker-a',
        attempts: 1,
        result: { score: 42 },
      });
      const trail = (await rt.audit(wf.id)).map((e) => e.eventType);
      expect(trail).toEqual([
        'WORKFLOW_STARTED',
        'TASK_DISPATCHED',
        'TASK_COMPLETED',
        'STEP_EXECUTED',
        'STEP_EXECUTED',
        'WORKFLOW_COMPLETED',
      ]);
    });

    it('runs tasks in the same process when runTasks is on (the default)', async () => {
      const local = engineFor(handle, { clock });
      const wf = await local.start(await definition(parallel('')));
      await local.drain();
      expect((await local.get(wf.id)).status).toBe('COMPLETED');
      await local.close();
    });

    it('merges PARALLEL results in declaration order: SHALLOW PREFER_NEW by default', async () => {
      const wf = await rt.start(await definition(parallel('')));
      expect(await listTasks(handle.store, wf.id)).toHaveLength(3);
      await rt.work();
      await rt.drain();
      const done = await rt.get(wf.id);
      expect(done.status).toBe('COMPLETED');
      expect(done.state).toMatchObject({
        a: 1,
        b: 2,
        c: 3,
        shared: 'b',
        nested: { y: 2 },
        b_in_place: true,
      });
    });

    it('merges DEEP with PREFER_EXISTING, and fails the step on RAISE_ERROR conflicts', async () => {
      const deep = await rt.start(
        await definition(
          parallel('    merge_strategy: DEEP\n    merge_conflict_behavior: PREFER_EXISTING'),
        ),
        { shared: 'original' },
      );
      await rt.work();
      await rt.drain();
      expect((await rt.get(deep.id)).state).toMatchObject({
        shared: 'original',
        nested: { x: 1, y: 2 },
      });
      const strict = await rt.start(
        await definition(
          parallel('    merge_conflict_behavior: RAISE_ERROR').replace('fan_out', 'fan_out_strict'),
        ),
      );
      await rt.work();
      await rt.drain();
      const failed = await rt.get(strict.id);
      expect(failed.status).toBe('FAILED');
      const error = (await rt.audit(strict.id)).find((e) => e.eventType === 'STEP_FAILED')
        ?.eventData.error as { message: string };
      expect(error.message).toContain('shared');
    });

    it('retries a failing task with backoff until it succeeds', async () => {
      const def = await definition(`
workflow_type: flaky
automate_next: true
steps:
  - { name: work, type: ASYNC, function: steps.flaky_task }
`);
      const wf = await rt.start(def);
      expect(await rt.work()).toBe(1);
      expect(await rt.work()).toBe(0); // the retry is not due yet
      clock.advance(1_000);
      expect(await rt.work()).toBe(1);
      clock.advance(1_999);
      expect(await rt.work()).toBe(0);
      clock.advance(1);
      expect(await rt.work()).toBe(1);
      await rt.drain();
      const done = await rt.get(wf.id);
      expect(done).toMatchObject({ status: 'COMPLETED', state: { flaky_done_on: 3 } });
    });

    it('records failures under parallel_failures with allow_partial_success, and fails (with rollback) without it', async () => {
      const lenient = await definition(`
workflow_type: lenient
automate_next: true
steps:
  - name: fan
    type: PARALLEL
    allow_partial_success: true
    tasks:
      - { name: good, function_path: steps.task_a }
      - { name: bad, function_path: steps.failing_task }
  - { name: after, type: STANDARD, function: steps.mark }
`);
      const a = await rt.start(lenient);
      for (let i = 0; i < 3; i++) {
        await rt.work();
        clock.advance(10_000);
      }
      await rt.drain();
      const done = await rt.get(a.id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: {
          a: 1,
          parallel_failures: {
            fan: [{ task: 'bad', error: 'steps.failing_task failed: task always fails' }],
          },
        },
      });

      const strict = await definition(`
workflow_type: strict
automate_next: true
steps:
  - { name: hold, type: STANDARD, function: steps.reserve, compensate_function: steps.unreserve }
  - name: fan
    type: PARALLEL
    tasks:
      - { name: good, function_path: steps.task_a }
      - { name: bad, function_path: steps.failing_task }
`);
      const b = await rt.start(strict);
      for (let i = 0; i < 3; i++) {
        await rt.work();
        clock.advance(10_000);
      }
      await rt.drain();
      expect((await rt.get(b.id)).status).toBe('FAILED_ROLLED_BACK');
    });

    it('hands a task whose worker died to another worker after its lease expires', async () => {
      const def = await definition(`
workflow_type: leased
automate_next: true
steps:
  - { name: score, type: ASYNC, function: steps.score_async }
`);
      const wf = await rt.start(def, { amount: 5 });
      const claimed = await claimTasks(handle.store, {
        workerId: 'dead-worker',
        limit: 10,
        leaseMs: 60_000,
        now: clock.now(),
      });
      expect(claimed).toHaveLength(1);
      expect(await rt.work({ leaseMs: 60_000 })).toBe(0);
      clock.advance(60_001);
      expect(await rt.work()).toBe(1);
      await rt.drain();
      expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED', state: { score: 10 } });
      expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
        workerId: 'worker-a',
        attempts: 2,
      });
    });

    it('routes tasks by the workflow data region', async () => {
      const def = await definition(`
workflow_type: regional
automate_next: true
steps:
  - { name: score, type: ASYNC, function: steps.score_async }
`);
      const wf = await rt.start(def, { amount: 4 }, { dataRegion: 'eu' });
      expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({ status: 'PENDING' });
      expect(await rt.work({ regions: ['us'] })).toBe(0);
      expect(await rt.work({ regions: ['eu'] })).toBe(1);
      await rt.drain();
      expect((await rt.get(wf.id)).state.score).toBe(8);
    });

    it('applies each result exactly once when two runtimes race for the tasks', async () => {
      const other = engineFor(handle, { clock, runTasks: false, workerId: 'worker-b' });
      const def = await definition(parallel(''));
      const started = await Promise.all(Array.from({ length: 6 }, () => rt.start(def)));
      await Promise.all([rt.work({ batch: 2 }), other.work({ batch: 2 }), rt.work({ batch: 1 })]);
      await rt.drain();
      await other.drain();
      for (const wf of started) {
        const done = await rt.get(wf.id);
        expect(done.status).toBe('COMPLETED');
        const trail = (await rt.audit(wf.id)).map((e) => e.eventType);
        expect(trail.filter((e) => e === 'TASK_COMPLETED')).toHaveLength(3);
        expect(trail.filter((e) => e === 'STEP_EXECUTED')).toHaveLength(2);
      }
      await other.close();
    });

    it('drops the late outcome of a task whose lease expired and was taken over', async () => {
      const gated = gatedExecutor();
      const slow = workerWith('worker-slow', gated.executor);
      const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
      const late = slow.work({ leaseMs: 60_000 });
      await gated.entered;
      await takeOver(slow, late, gated.open, 1);
      expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED', state: { score: 10 } });
      await expectRecordedHere(wf.id);
    });

    it('runs at most `batch` functions at once and holds `prefetch` more, claimed ahead', async () => {
      const counting = countingExecutor();
      const worker = workerWith('worker-p', counting.executor);
      const def = await definition(ASYNC_FLOW);
      const started = await Promise.all(
        Array.from({ length: 7 }, (_, i) => rt.start(def, { amount: i })),
      );
      const done = worker.work({ batch: 2, prefetch: 3 });
      await counting.reached(2);
      const statuses = (await Promise.all(started.map((wf) => listTasks(handle.store, wf.id))))
        .flat()
        .map((t) => t.status);
      // 2 running and 3 waiting in the worker are claimed; the other 2 are still queued
      expect(statuses.filter((s) => s === 'CLAIMED')).toHaveLength(5);
      expect(statuses.filter((s) => s === 'PENDING')).toHaveLength(2);
      counting.open();
      expect(await done).toBe(7);
      await worker.drain();
      await worker.close();
      expect(counting.most()).toBe(2);
      for (const [i, wf] of started.entries()) {
        expect(await rt.get(wf.id)).toMatchObject({ status: 'COMPLETED', state: { score: 2 * i } });
        const trail = (await rt.audit(wf.id)).map((e) => e.eventType);
        expect(trail.filter((e) => e === 'TASK_COMPLETED')).toHaveLength(1);
      }
    });

    it('records a prefetched task once when its lease ran out while it waited and another worker took it over', async () => {
      const counting = countingExecutor();
      const slow = workerWith('worker-slow', counting.executor);
      const def = await definition(ASYNC_FLOW);
      const started = await Promise.all([
        rt.start(def, { amount: 1 }),
        rt.start(def, { amount: 2 }),
      ]);
      const late = slow.work({ batch: 1, prefetch: 1, leaseMs: 60_000 });
      await counting.reached(1);
      // the running task and the waiting one are both taken over and finished here; the slow
      // worker still runs what it held, and neither of its outcomes is recorded
      await takeOver(slow, late, counting.open, 2);
      for (const wf of started) await expectRecordedHere(wf.id);
    });

    it('records the outcome of a task whose workflow was cancelled while it ran, and settles nothing', async () => {
      const gated = gatedExecutor();
      const worker = workerWith('worker-b', gated.executor);
      const wf = await rt.start(await definition(ASYNC_FLOW), { amount: 5 });
      const working = worker.work();
      await gated.entered;
      await rt.cancel(wf.id);
      gated.open();
      expect(await working).toBe(1);
      await worker.close();
      expect((await rt.get(wf.id)).status).toBe('CANCELLED');
      expect((await listTasks(handle.store, wf.id))[0]).toMatchObject({
        status: 'COMPLETED',
        workerId: 'worker-b',
      });
      const trail = (await rt.audit(wf.id)).map((e) => e.eventType);
      expect(trail.filter((e) => e === 'TASK_COMPLETED')).toHaveLength(1);
      expect(trail).not.toContain('STEP_EXECUTED');
    });
  });
}
