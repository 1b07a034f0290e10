/**
 * The `threads` execution provider on a real piscina pool: results, `.ts` modules, a CPU-bound
 * step that leaves the engine's event loop free, errors and directives rebuilt from the thread,
 * log replay, abort, uncloneable results, concurrency, close — and a workflow run end to end.
 * Every test closes its pool and fails if a worker thread is still alive afterwards.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import {
  createStepLogger,
  inlineExecutor,
  mapSecrets,
  noEffects,
  readDirective,
  threadsExecutor,
  type JsonObject,
  type StepContext,
  type StepEffects,
  type StepExecutor,
} from '../../runtime/index.js';
import { definition, ENGINE_STEPS, engineFor } from '../support/engine.js';
import { openWithSchema, type TestStore, EDGE_DIALECT } from '../support/stores.js';

const STEPS = fileURLToPath(new URL('../fixtures/threads/', import.meta.url));

// Leak check: every worker thread this file starts must have exited after each test.
const live = new Set<Worker>();
const exited = new Map<Worker, Promise<unknown>>();
const onWorker = (message: unknown) => {
  const { worker } = message as { worker: Worker };
  live.add(worker);
  exited.set(
    worker,
    once(worker, 'exit').finally(() => live.delete(worker)),
  );
};
beforeAll(() => {
  subscribe('worker_threads', onWorker);
  return () => unsubscribe('worker_threads', onWorker);
});

let opened: StepExecutor[] = [];
const pool = (options: { minThreads?: number; maxThreads?: number } = {}): StepExecutor => {
  const executor = threadsExecutor({ stepsRoot: STEPS, minThreads: 1, maxThreads: 2, ...options });
  opened.push(executor);
  return executor;
};

afterEach(async () => {
  await Promise.all(opened.map((executor) => executor.close()));
  opened = [];
  // Threads terminated by an abort exit on their own schedule: wait for their exit events.
  const deadline = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
  await Promise.race([Promise.all(exited.values()), deadline]);
  exited.clear();
  const leaked = live.size;
  live.clear(); // one leaking test must not fail the ones after it
  expect(leaked, 'worker threads left running').toBe(0);
});

const stepContext = (
  overrides: Partial<StepContext> = {},
): { context: StepContext; effects: StepEffects } => {
  const effects = noEffects();
  const context: StepContext = {
    workflowId: 'wf-1',
    workflowType: 'threads_test',
    stepName: 'work',
    attempt: 1,
    idempotencyKey: 'wf-1:work:1',
    signal: new AbortController().signal,
    secrets: mapSecrets({}),
    log: createStepLogger(effects, 'work'),
    ...overrides,
  };
  return { context, effects };
};

const rejection = async (promise: Promise<unknown>): Promise<Record<string, unknown>> => {
  try {
    await promise;
  } catch (error) {
    return error as Record<string, unknown>;
  }
  throw new Error('expected the call to reject');
};

describe('threads executor', () => {
  it('runs the step in a worker thread and returns what it returned', async () => {
    const executor = pool();
    const { context } = stepContext({ attempt: 2 });
    await expect(executor.call('steps.merge', { a: 1, b: 2 }, context)).resolves.toEqual({
      total: 3,
      step: 'work',
      attempt: 2,
      main_thread: false,
    });
    await expect(executor.call('steps.async_merge', { n: 21 }, context)).resolves.toEqual({
      doubled: 42,
    });
  });

  it('copies in-place changes back into the caller’s working copy', async () => {
    const executor = pool();
    const state: JsonObject = { keep: 1, drop_me: true };
    await executor.call('steps.mutate_in_place', state, stepContext().context);
    expect(state).toEqual({ keep: 1, in_place: 'kept' });
  });

  it('loads a .ts step module, and each module once per thread', async () => {
    const executor = pool({ minThreads: 1, maxThreads: 1 });
    const { context } = stepContext();
    await expect(
      executor.call('typed.priced', { amount_minor: 1250, items: ['a', 'b'] }, context),
    ).resolves.toEqual({ amount_major: 12.5, item_count: 2 });
    const first = (await executor.call('steps.count_calls', {}, context)) as JsonObject;
    const second = (await executor.call('steps.count_calls', {}, context)) as JsonObject;
    expect(second).toEqual({ calls: (first.calls as number) + 1, thread: first.thread });
  });

  it('keeps the main event loop ticking while a step burns CPU (and inline does not)', async () => {
    const ticksDuring = async (executor: StepExecutor): Promise<number> => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      try {
        const started = performance.now();
        // long enough that a loaded machine still gives a free loop a few dozen ticks
        await executor.call('steps.burn', { ms: 1000 }, stepContext().context);
        expect(performance.now() - started).toBeGreaterThanOrEqual(990);
      } finally {
        clearInterval(timer);
      }
      return ticks;
    };
    const executor = pool({ minThreads: 1, maxThreads: 1 });
    await executor.call('steps.burn', { ms: 1 }, stepContext().context); // warm the thread
    expect(await ticksDuring(executor)).toBeGreaterThanOrEqual(10);
    // Control: the same measurement sees a blocked loop when the step runs inline (warmed
    // too, so the module's first import — which yields to the loop — is not measured).
    const inline = inlineExecutor({ stepsRoot: STEPS });
    await inline.call('steps.burn', { ms: 1 }, stepContext().context);
    expect(await ticksDuring(inline)).toBeLessThanOrEqual(2);
  });

  it('rethrows a thrown Error with its name, message, stack and fields', async () => {
    const executor = pool();
    const { context } = stepContext();
    const error = await rejection(executor.call('steps.fail', {}, context));
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'TypeError', message: 'card declined' });
    expect(error.stack).toContain('steps.js');
    expect(readDirective(error)).toBeUndefined();
    await expect(executor.call('steps.fail_with_code', {}, context)).rejects.toMatchObject({
      message: 'limit exceeded',
      code: 'LIMIT',
      details: { limit: 5 },
    });
  });

  it('turns non-Error throws into Errors that show the value', async () => {
    const executor = pool();
    const { context } = stepContext();
    const text = await rejection(executor.call('steps.throw_string', {}, context));
    expect(text).toBeInstanceOf(Error);
    expect(text.message).toBe('plain string');
    const object = await rejection(executor.call('steps.throw_object', {}, context));
    expect(object).toBeInstanceOf(Error);
    expect(object.message).toBe('{"reason":"odd","amount":3}');
  });

  it('rebuilds every directive so readDirective reads it as an inline one', async () => {
    const executor = pool();
    const { context } = stepContext();
    const read = async (path: string, state: JsonObject = {}) =>
      readDirective(await rejection(executor.call(path, state, context)));
    const state: JsonObject = {};
    expect(await read('steps.jump', state)).toEqual({ kind: 'jump', target: 'finish' });
    expect(state).toEqual({ jumped: true });
    expect(await read('steps.jump_snake')).toEqual({ kind: 'jump', target: 'finish' });
    expect(await read('steps.pause')).toEqual({
      kind: 'pause',
      result: { waiting_for: 'approval' },
    });
    expect(await read('steps.sub_workflow')).toEqual({
      kind: 'subWorkflow',
      workflowType: 'child_flow',
      initialData: { seed: 2 },
    });
    expect(await read('steps.sub_workflow_snake')).toEqual({
      kind: 'subWorkflow',
      workflowType: 'child_flow',
      initialData: { seed: 3 },
    });
  });

  it('replays context.log lines into the caller’s logger in order, on return and on throw', async () => {
    const executor = pool();
    const returned = stepContext();
    await executor.call('steps.log_lines', {}, returned.context);
    expect(returned.effects.logs).toEqual([
      { stepName: 'work', level: 'info', message: 'one' },
      { stepName: 'work', level: 'info', message: 'two', data: { n: 2 } },
    ]);
    const threw = stepContext();
    await expect(executor.call('steps.log_then_fail', {}, threw.context)).rejects.toThrow(
      'after logging',
    );
    expect(threw.effects.logs.map((l) => [l.level, l.message, l.data])).toEqual([
      ['info', 'first', { n: 1 }],
      ['debug', 'second', undefined],
      ['warn', 'third', { n: 3 }],
      ['error', 'fourth', undefined],
    ]);
  });

  it('ships plain context fields but no secrets: steps read SAFFRON_SECRET_* from the env', async () => {
    const executor = pool();
    process.env.SAFFRON_SECRET_THREAD_TEST_TOKEN = 'from-env';
    try {
      const { context } = stepContext({
        secrets: mapSecrets({ THREAD_TEST_TOKEN: 'from-the-main-thread-only' }),
        loop_item: { sku: 'x' },
        custom: [1, 2],
        helper: () => 'functions stay behind',
      });
      await expect(executor.call('steps.read_context', {}, context)).resolves.toEqual({
        secret: 'from-env',
        lower: 'from-env',
        item: { sku: 'x' },
        extra: [1, 2],
        has_signal: true,
        key: 'wf-1:work:1',
      });
    } finally {
      delete process.env.SAFFRON_SECRET_THREAD_TEST_TOKEN;
    }
  });

  it('cancels the task when the signal aborts, rejecting with the abort reason', async () => {
    const executor = pool({ minThreads: 1, maxThreads: 1 });
    await executor.call('steps.count_calls', {}, stepContext().context); // warm the thread
    const controller = new AbortController();
    const reason = new Error('step timed out');
    const { context } = stepContext({ signal: controller.signal });
    const running = executor.call('steps.sleep_forever', {}, context);
    setTimeout(() => controller.abort(reason), 50);
    await expect(running).rejects.toBe(reason);
    // Already aborted: rejects without running.
    await expect(executor.call('steps.merge', { a: 1, b: 1 }, context)).rejects.toBe(reason);
    // The pool replaces the terminated thread.
    await expect(
      executor.call('steps.merge', { a: 1, b: 1 }, stepContext().context),
    ).resolves.toMatchObject({ total: 2 });
  });

  it('rejects a result or state that cannot leave the thread, naming the function', async () => {
    const executor = pool();
    const { context } = stepContext();
    const result = await rejection(executor.call('steps.return_function', {}, context));
    expect(result).toMatchObject({
      name: 'ThreadsExecutorError',
      code: 'THREAD_RESULT_NOT_CLONEABLE',
    });
    expect(result.message).toMatch(/^steps\.return_function returned a value that cannot leave/);
    const state = await rejection(executor.call('steps.put_function_in_state', {}, context));
    expect(state).toMatchObject({ code: 'THREAD_RESULT_NOT_CLONEABLE' });
    expect(state.message).toMatch(/^steps\.put_function_in_state left a value in state/);
    // A class instance travels as its plain data.
    await expect(executor.call('steps.return_instance', {}, context)).resolves.toEqual({
      money: { amount: 5 },
    });
  });

  it('completes 8 concurrent calls on 2 threads', async () => {
    const executor = pool({ minThreads: 2, maxThreads: 2 });
    const results = (await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        executor.call('steps.burn', { ms: 30 + i }, stepContext().context),
      ),
    )) as JsonObject[];
    expect(results).toHaveLength(8);
    expect(results.every((r) => r.spins === true)).toBe(true);
    expect(new Set(results.map((r) => r.thread)).size).toBeLessThanOrEqual(2);
  });

  it('rejects calls after close()', async () => {
    const executor = pool();
    await executor.call('steps.count_calls', {}, stepContext().context);
    await executor.close();
    await executor.close();
    expect(live.size).toBe(0);
    await expect(
      executor.call('steps.merge', { a: 1, b: 2 }, stepContext().context),
    ).rejects.toMatchObject({
      code: 'EXECUTOR_CLOSED',
      message: 'cannot run steps.merge: the threads executor is closed',
    });
  });
});

const sqlite = EDGE_DIALECT;

describe('a runtime on the threads executor (sqlite)', () => {
  let handle: TestStore | undefined;
  let rt: Runtime | undefined;
  afterEach(async () => {
    await rt?.close();
    await handle?.close();
    rt = undefined;
    handle = undefined;
  });

  it('runs a 3-step STANDARD workflow to COMPLETED, with in-place changes and logs', async () => {
    handle = await openWithSchema(sqlite);
    const executor = threadsExecutor({ stepsRoot: ENGINE_STEPS, minThreads: 1, maxThreads: 2 });
    opened.push(executor);
    rt = engineFor(handle, { executor });
    const def = await definition(`
workflow_type: threaded
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.add }
  - { name: two, type: STANDARD, function: steps.mutate_in_place }
  - { name: three, type: STANDARD, function: steps.log_things }
`);
    const wf = await rt.start(def, { total: 1, increment: 4 });
    expect(wf).toMatchObject({
      status: 'COMPLETED',
      state: { total: 5, increment: 4, in_place: 'kept' },
    });
    const logs = await handle.store.db
      .selectFrom('workflow_execution_logs')
      .select(['level', 'message', 'step_name'])
      .where('workflow_id', '=', wf.id)
      .orderBy('id')
      .execute();
    expect(logs).toEqual([
      { level: 'info', message: 'plain info', step_name: 'three' },
      { level: 'warn', message: 'careful', step_name: 'three' },
      { level: 'error', message: 'bad news', step_name: 'three' },
    ]);
  });

  it('follows a jump directive thrown in a thread', async () => {
    handle = await openWithSchema(sqlite);
    const executor = threadsExecutor({ stepsRoot: ENGINE_STEPS, minThreads: 1, maxThreads: 1 });
    opened.push(executor);
    rt = engineFor(handle, { executor });
    const def = await definition(`
workflow_type: threaded_jump
automate_next: true
steps:
  - { name: go, type: STANDARD, function: steps.jump_to_finish }
  - { name: skipped, type: STANDARD, function: steps.add }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
    const wf = await rt.start(def);
    expect(wf).toMatchObject({ status: 'COMPLETED', state: { jumped: true, visited: ['finish'] } });
    expect(wf.state).not.toHaveProperty('total');
  });
});
