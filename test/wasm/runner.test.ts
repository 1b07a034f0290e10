/**
 * The WASM runner on a real piscina pool and real guests (WAT compiled with wabt; C compiled
 * with clang + wasi-libc when clang is installed): the stdin/stdout contract, the module rule
 * (commands vs reactors), the sandbox (no files, no environment, no signals), every failure
 * cause, the memory cap, the stdout limit, the timeout that terminates a spinning guest's
 * thread while the pool keeps working, the per-thread compile cache, hash verification on
 * every call, and one thread pool shared by several runners. Every test file's worker threads must be gone after its runners are closed.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWasmRunner,
  createWasmThreadPool,
  mapWasmSource,
  type WasmCall,
  type WasmCallResult,
  type WasmRunner,
} from '../../runtime/wasm/index.js';
import {
  clangAvailable,
  compileC,
  compileWatGuests,
  FRAUD_SCORER_C,
  tampered,
  type Guest,
  type WatGuestName,
} from '../support/wasmGuests.js';

const live = new Set<Worker>();
const exited: Promise<unknown>[] = [];
const onWorker = (message: unknown) => {
  const { worker } = message as { worker: Worker };
  live.add(worker);
  exited.push(once(worker, 'exit').finally(() => live.delete(worker)));
};

let guests: Record<WatGuestName, Guest>;
const binaries = new Map<string, Uint8Array>();
const runners: WasmRunner[] = [];
let runner: WasmRunner;

function newRunner(
  options: { maxThreads?: number; memoryLimitMb?: number; maxOutputBytes?: number } = {},
) {
  const created = createWasmRunner({ source: mapWasmSource(binaries), ...options });
  runners.push(created);
  return created;
}

beforeAll(async () => {
  subscribe('worker_threads', onWorker);
  guests = await compileWatGuests();
  for (const guest of Object.values(guests)) binaries.set(guest.hash, guest.bytes);
  runner = newRunner({ maxThreads: 2, memoryLimitMb: 4 });
});

afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
  const deadline = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
  await Promise.race([Promise.all(exited), deadline]);
  unsubscribe('worker_threads', onWorker);
  expect(live.size, 'worker threads left running').toBe(0);
});

const call = (name: WatGuestName, overrides: Partial<WasmCall> = {}): Promise<WasmCallResult> =>
  runner.run({
    hash: guests[name].hash,
    input: { amount_minor: 1250 },
    timeoutMs: 5000,
    ...overrides,
  });

async function output(result: Promise<WasmCallResult>): Promise<Record<string, unknown>> {
  const r = await result;
  if (!r.ok) throw new Error(`expected output, got ${r.error.code}: ${r.error.message}`);
  return r.output;
}

async function failure(result: Promise<WasmCallResult>) {
  const r = await result;
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.output)}`);
  return {
    code: r.error.code,
    message: r.error.message,
    details: r.error.details,
    stderr: r.stderr,
  };
}

describe('WASM runner', () => {
  it('passes the input on stdin and returns the JSON object written on stdout', async () => {
    const input = { amount_minor: 1250, card: { last4: '4242' }, tags: ['a', 'é'] };
    await expect(output(call('echo', { input }))).resolves.toEqual({ echo: input, guest: 'wat' });
  });

  it('runs a command’s _start whatever the entrypoint, and a reactor’s entrypoint after _initialize', async () => {
    await expect(output(call('both'))).resolves.toEqual({ ran: '_start' });
    await expect(output(call('both', { entrypoint: 'execute' }))).resolves.toEqual({
      ran: '_start',
    });
    await expect(output(call('reactor'))).resolves.toEqual({ mode: 'reactor', initialized: 1 });
    await expect(output(call('reactor', { entrypoint: 'other' }))).resolves.toEqual({
      mode: 'other',
    });
    await expect(failure(call('reactor', { entrypoint: 'failing' }))).resolves.toMatchObject({
      code: 'WASM_EXIT_NONZERO',
      message: 'exit code 3',
    });
    await expect(failure(call('reactor', { entrypoint: 'missing' }))).resolves.toMatchObject({
      code: 'WASM_ENTRYPOINT_MISSING',
      message: expect.stringContaining("'missing'") as string,
    });
    await expect(failure(call('reactor', { entrypoint: 'with_param' }))).resolves.toMatchObject({
      code: 'WASM_ENTRYPOINT_MISSING',
    });
  });

  it('gives the guest no files, no environment, no arguments and no signals', async () => {
    await expect(output(call('escape'))).resolves.toEqual({
      open_fd3: 8, // EBADF: there is no preopened directory
      open_stdin: 54, // ENOTDIR
      prestat_fd3: 8, // EBADF: the preopen scan ends at once
      raise: 52, // ENOSYS: proc_raise never reaches the host process
      env_count: 0,
      argc: 1, // the program name
    });
  });

  it('reports each failure cause with its own code', async () => {
    await expect(failure(call('exit7'))).resolves.toEqual({
      code: 'WASM_EXIT_NONZERO',
      message: 'exit code 7',
      details: { exit_code: 7 },
      stderr: 'card declined by rule 7\n',
    });
    await expect(failure(call('notJson'))).resolves.toMatchObject({
      code: 'WASM_OUTPUT_INVALID',
      message: expect.stringContaining('not valid JSON') as string,
    });
    await expect(failure(call('array'))).resolves.toMatchObject({
      code: 'WASM_OUTPUT_INVALID',
      message: 'stdout must be one JSON object, got an array',
    });
    await expect(failure(call('trap'))).resolves.toMatchObject({
      code: 'WASM_TRAP',
      message: expect.stringContaining('unreachable') as string,
    });
    await expect(failure(call('foreignImport'))).resolves.toMatchObject({
      code: 'WASM_LINK_FAILED',
    });
    await expect(failure(call('noMemory'))).resolves.toMatchObject({
      code: 'WASM_INVALID_MODULE',
    });
    await expect(
      failure(runner.run({ hash: 'ab'.repeat(32), input: {}, timeoutMs: 1000 })),
    ).resolves.toMatchObject({ code: 'WASM_MODULE_NOT_FOUND' });
  });

  it('caps guest memory: growth past the cap fails inside the guest, a larger declaration is refused', async () => {
    // Cap 4 MiB = 64 pages; the guest would stop at 1024 pages (64 MiB) on its own.
    await expect(output(call('grow'))).resolves.toEqual({ pages: 64, grow_failed: 1 });
    await expect(failure(call('bigMemory'))).resolves.toMatchObject({
      code: 'WASM_MEMORY_LIMIT',
      details: { declared_pages: 100, limit_pages: 64 },
    });
    // The same guest under the default 256 MiB cap grows to its own 1024-page stop.
    const roomy = newRunner({ maxThreads: 1 });
    const roomyResult = roomy.run({ hash: guests.grow.hash, input: {}, timeoutMs: 5000 });
    await expect(output(roomyResult)).resolves.toEqual({ pages: 1024, grow_failed: 0 });
  });

  it('stops a guest that writes more than the stdout limit', async () => {
    await expect(failure(call('flood'))).resolves.toMatchObject({
      code: 'WASM_OUTPUT_TOO_LARGE',
      details: { limit_bytes: 1024 * 1024 },
    });
  });

  it('terminates the thread of a guest that runs past its timeout; the pool keeps working', async () => {
    const started = await output(call('echo'));
    expect(started.guest).toBe('wat');
    const spun = await call('loop', { timeoutMs: 150 });
    expect(spun.ok).toBe(false);
    expect(!spun.ok && spun.error.code).toBe('WASM_TIMEOUT');
    expect(!spun.ok && spun.error.message).toBe(
      'timed out after 150 ms; the worker thread running it was terminated',
    );
    // Both threads busy spinning at once, then work again.
    const both = await Promise.all([
      call('loop', { timeoutMs: 150 }),
      call('loop', { timeoutMs: 150 }),
    ]);
    expect(both.map((r) => !r.ok && r.error.code)).toEqual(['WASM_TIMEOUT', 'WASM_TIMEOUT']);
    const after = await Promise.all([call('echo'), call('echo'), call('echo')]);
    expect(after.map((r) => r.ok)).toEqual([true, true, true]);
  });

  it('charges a call for its own run, not for its wait behind a busy thread', async () => {
    const single = newRunner({ maxThreads: 1 });
    await output(single.run({ hash: guests.echo.hash, input: {}, timeoutMs: 5000 }));
    // the only thread spins for 600 ms; the echo queued behind it has a 300 ms budget of its own
    const spinning = single.run({ hash: guests.loop.hash, input: {}, timeoutMs: 600 });
    const queued = single.run({ hash: guests.echo.hash, input: { queued: true }, timeoutMs: 300 });
    const started = performance.now();
    const [spun, echoed] = await Promise.all([spinning, queued]);
    expect(!spun.ok && spun.error.code).toBe('WASM_TIMEOUT');
    expect(echoed.ok && echoed.output).toMatchObject({ echo: { queued: true } });
    // it waited out the spinner, twice its own budget (and the thread's replacement)
    expect(performance.now() - started).toBeGreaterThan(550);
  });

  it('does not block the engine’s event loop while a guest spins', async () => {
    const spinning = call('loop', { timeoutMs: 1000 });
    let finished = false;
    void spinning.then(() => (finished = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finished).toBe(false); // this timer fired while the guest was still running
    expect((await spinning).ok).toBe(false);
  });

  it('compiles a module once per thread and reuses it on warm calls', async () => {
    const single = newRunner({ maxThreads: 1 });
    const stats = [];
    for (let i = 0; i < 5; i++) {
      const r = await single.run({ hash: guests.echo.hash, input: { i }, timeoutMs: 5000 });
      expect(r.ok).toBe(true);
      stats.push(r.thread!);
    }
    expect(stats.map((s) => s.compiled)).toEqual([true, false, false, false, false]);
    expect(new Set(stats.map((s) => s.compiles))).toEqual(new Set([1]));
    expect(new Set(stats.map((s) => s.threadId)).size).toBe(1);
    // Another module compiles once more on the same thread.
    const other = await single.run({ hash: guests.reactor.hash, input: {}, timeoutMs: 5000 });
    expect(other.thread).toMatchObject({ compiled: true, compiles: 2 });
    const again = await single.run({ hash: guests.echo.hash, input: {}, timeoutMs: 5000 });
    expect(again.thread).toMatchObject({ compiled: false, compiles: 2 });
  });

  it('gives every call a memory as fresh as a new instance’s, also when the thread reuses it', async () => {
    const single = newRunner({ maxThreads: 1, memoryLimitMb: 4 });
    const residue = () =>
      output(single.run({ hash: guests.residue.hash, input: {}, timeoutMs: 5000 }));
    for (let i = 0; i < 3; i++)
      await expect(residue()).resolves.toEqual({ word: 0, last: 0, pages: 2 });
    // a guest that grew its memory to the cap, then the first again: still a fresh memory
    await expect(
      output(single.run({ hash: guests.grow.hash, input: {}, timeoutMs: 5000 })),
    ).resolves.toEqual({ pages: 64, grow_failed: 1 });
    await expect(residue()).resolves.toEqual({ word: 0, last: 0, pages: 2 });
  });

  it('verifies the SHA-256 on every call, also after the module was compiled', async () => {
    const store = new Map<string, Uint8Array>([[guests.echo.hash, guests.echo.bytes]]);
    const single = createWasmRunner({ source: mapWasmSource(store), maxThreads: 1 });
    runners.push(single);
    const run = () => single.run({ hash: guests.echo.hash, input: {}, timeoutMs: 5000 });
    expect((await run()).ok).toBe(true);
    store.set(guests.echo.hash, tampered(guests.echo));
    const result = await run();
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('WASM_HASH_MISMATCH');
    store.set(guests.echo.hash, guests.echo.bytes);
    expect((await run()).ok).toBe(true);
  });

  it('lets runners share one thread pool, which closing a runner leaves to its owner', async () => {
    const threads = createWasmThreadPool(1);
    const first = createWasmRunner({ source: mapWasmSource(binaries), threads });
    const second = createWasmRunner({ source: mapWasmSource(binaries), threads });
    const echo = (r: WasmRunner, n: number) =>
      output(r.run({ hash: guests.echo.hash, input: { n }, timeoutMs: 5000 }));
    await expect(Promise.all([echo(first, 1), echo(second, 2)])).resolves.toEqual([
      { echo: { n: 1 }, guest: 'wat' },
      { echo: { n: 2 }, guest: 'wat' },
    ]);
    await first.close();
    await expect(echo(second, 3)).resolves.toEqual({ echo: { n: 3 }, guest: 'wat' });
    await second.close();
    await threads.close();
  });

  it('refuses calls after close', async () => {
    const closed = newRunner();
    await closed.close();
    const result = await closed.run({ hash: guests.echo.hash, input: {}, timeoutMs: 5000 });
    expect(!result.ok && result.error.code).toBe('WASM_RUNNER_CLOSED');
  });

  it.skipIf(!clangAvailable)('runs a C guest built with clang and wasi-libc', async () => {
    const scorer = compileC(FRAUD_SCORER_C);
    binaries.set(scorer.hash, scorer.bytes);
    const score = (input: unknown) => runner.run({ hash: scorer.hash, input, timeoutMs: 5000 });
    await expect(
      output(
        score({ amount_minor: 250_000, country: 'US', card_present: false, attempts_last_hour: 2 }),
      ),
    ).resolves.toEqual({ fraud_score: 88, fraud_decision: 'decline' });
    await expect(
      output(score({ amount_minor: 1250, country: 'DE', card_present: true })),
    ).resolves.toEqual({
      fraud_score: 0,
      fraud_decision: 'approve',
    });
    await expect(failure(score({ note: 'no amount' }))).resolves.toMatchObject({
      code: 'WASM_EXIT_NONZERO',
      message: 'exit code 2',
      stderr: 'input has no numeric amount_minor\n',
    });
  });
});
