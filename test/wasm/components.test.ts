/**
 * WebAssembly components on the WASM runner's real worker threads, built with jco at test
 * time: the same guests as preview1 modules and as `wasi:cli/run` components give the same
 * output; a typed `execute` function is called with the JSON text; and the sandbox's
 * guarantees hold for components as for modules — the header tells them apart, the SHA-256 is
 * checked on every call (a component changed after a good copy ran is refused), a spinning
 * component is killed at its timeout and the pool keeps working, the memory cap applies to
 * every core module, stdout is bounded, no file can be opened, an import outside the WASI 0.2
 * subset (sockets) is refused before anything runs, and a call to an unimplemented member of a
 * provided interface is refused when it is made. Every call sees a fresh instance (nothing an
 * earlier call wrote), and the transpiled code has the shape the fast paths rely on (jco's
 * runtime outside `instantiate`, host calls without task bookkeeping; transpile.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkWasmBinary,
  createWasmRunner,
  mapWasmSource,
  wasmBinaryKind,
  type WasmCallResult,
  type WasmRunner,
} from '../../runtime/wasm/index.js';
import { transpileComponent } from '../../runtime/wasm/transpile.js';
import {
  compileWat,
  compileWatGuests,
  type Guest,
  type WatGuestName,
} from '../support/wasmGuests.js';
import {
  commandComponent,
  futureImportComponent,
  OPEN_FILE_WAT,
  socketComponent,
  typedComponent,
} from './componentGuests.js';

const AS_COMPONENTS = ['echo', 'loop', 'exit7', 'grow', 'bigMemory', 'flood', 'residue'] as const;

let modules: Record<WatGuestName, Guest>;
let components: Record<(typeof AS_COMPONENTS)[number], Guest>;
let openFile: { module: Guest; component: Guest };
let typed: Guest;
let socket: Guest;
let future: Guest;
const binaries = new Map<string, Uint8Array>();
const runners: WasmRunner[] = [];
let runner: WasmRunner;

beforeAll(async () => {
  modules = await compileWatGuests();
  components = Object.fromEntries(
    await Promise.all(
      AS_COMPONENTS.map(async (name) => [name, await commandComponent(modules[name])] as const),
    ),
  ) as typeof components;
  const openModule = await compileWat(OPEN_FILE_WAT);
  openFile = { module: openModule, component: await commandComponent(openModule) };
  typed = await typedComponent();
  socket = await socketComponent();
  future = await futureImportComponent();
  for (const guest of [
    ...Object.values(modules),
    ...Object.values(components),
    openFile.module,
    openFile.component,
    typed,
    socket,
    future,
  ])
    binaries.set(guest.hash, guest.bytes);
  runner = createWasmRunner({ source: mapWasmSource(binaries), maxThreads: 2, memoryLimitMb: 4 });
  runners.push(runner);
}, 60_000);

afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

const run = (guest: Guest, input: unknown = { amount_minor: 1250 }, timeoutMs = 5000) =>
  runner.run({ hash: guest.hash, input, timeoutMs });

function failed(result: WasmCallResult) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.output)}`);
  return result.error;
}

describe('WebAssembly components', () => {
  it('tells a component from a core module by its header', async () => {
    expect(wasmBinaryKind(modules.echo.bytes)).toBe('module');
    expect(wasmBinaryKind(components.echo.bytes)).toBe('component');
    expect(Array.from(components.echo.bytes.subarray(4, 8))).toEqual([0x0d, 0x00, 0x01, 0x00]);
    expect(wasmBinaryKind(Buffer.from('not wasm at all'))).toBeUndefined();
    expect(await checkWasmBinary(components.echo.bytes)).toBe('component');
    expect(await checkWasmBinary(modules.echo.bytes)).toBe('module');
  });

  it('gives the same output for the same guest as a module and as a wasi:cli/run component', async () => {
    for (const input of [
      {},
      { amount_minor: 1250, card: { last4: '4242' } },
      { list: [1, 'two'] },
    ]) {
      const [asModule, asComponent] = await Promise.all([
        run(modules.echo, input),
        run(components.echo, input),
      ]);
      expect(asModule).toMatchObject({ ok: true, output: { echo: input, guest: 'wat' } });
      expect(asComponent.ok && asComponent.output).toEqual(asModule.ok && asModule.output);
    }
  });

  it('gives every call of a component a fresh instance: nothing of an earlier call is left', async () => {
    const single = createWasmRunner({
      source: mapWasmSource(binaries),
      maxThreads: 1,
      memoryLimitMb: 4,
    });
    runners.push(single);
    const residue = async () => {
      const result = await single.run({
        hash: components.residue.hash,
        input: {},
        timeoutMs: 5000,
      });
      if (!result.ok) throw result.error;
      return result.output;
    };
    const first = await residue();
    // the adapter's own state sits in the last page: `last` is its, the same every time
    expect(first).toMatchObject({ word: 0 });
    for (let i = 0; i < 4; i++) await expect(residue()).resolves.toEqual(first);
    // after a call that did not end cleanly, too
    expect(
      failed(await single.run({ hash: components.exit7.hash, input: {}, timeoutMs: 5000 })).code,
    ).toBe('WASM_EXIT_NONZERO');
    await expect(residue()).resolves.toEqual(first);
  });

  it('evaluates jco’s runtime once per thread; host calls skip its task bookkeeping and shims', async () => {
    // the shape of jco's output both rely on: if a jco upgrade changes it, calls still run
    // (unchanged code), only slower — this test says so
    for (const guest of [components.echo, typed]) {
      const text = Buffer.from((await transpileComponent(guest.bytes)).source).toString('utf8');
      const instantiateAt = text.indexOf('function instantiate(');
      expect(text.indexOf('function createNewCurrentTask(')).toBeGreaterThan(-1);
      expect(text.indexOf('function createNewCurrentTask(')).toBeLessThan(instantiateAt);
    }
    const text = Buffer.from((await transpileComponent(components.echo.bytes)).source).toString(
      'utf8',
    );
    const hostTasks = text.split('taskCreation: {').length - 1;
    expect(hostTasks).toBeGreaterThan(5); // stdio handles, reads, writes, preopens
    expect(text.split('._saffronSync = true;').length - 1).toBe(hostTasks);
    // every import's configuration for the async machinery is built only if it is needed
    expect(text).not.toMatch(/_lowerImportBackwardsCompat\.bind\(/);
    expect(text.split('_saffronSyncImport(0, _trampoline').length - 1).toBe(2 * hostTasks);
    // jco's shim and fixup modules are JavaScript: two core instances per call instead of four
    expect(text.match(/= instantiateCore\(/g)).toHaveLength(2);
    expect(text).toContain('_saffronFillShim(');
  });

  it('compiles a component once per thread; later calls reuse it', async () => {
    const results: WasmCallResult[] = [];
    for (let i = 0; i < 6; i++) results.push(await run(components.echo, { i }));
    const warm = results.filter((r) => r.ok && r.thread.compiled === false);
    expect(warm.length).toBeGreaterThanOrEqual(4);
    expect(results.every((r) => r.ok)).toBe(true);
  });

  it('calls a typed execute function with the JSON text; err(message) is WASM_GUEST_ERROR', async () => {
    expect(await run(typed, { amount_minor: 7 })).toMatchObject({
      ok: true,
      output: { typed: { amount_minor: 7 } },
    });
    const error = failed(await run(typed, 'not an object'));
    expect(error).toMatchObject({
      code: 'WASM_GUEST_ERROR',
      details: { guest_error: 'expected a JSON object' },
    });
    const missing = failed(
      await runner.run({ hash: typed.hash, input: {}, timeoutMs: 5000, entrypoint: 'score' }),
    );
    expect(missing.code).toBe('WASM_ENTRYPOINT_MISSING');
    expect(missing.message).toContain('execute');
  });

  it('kills a spinning component at its timeout; the pool keeps working', async () => {
    const error = failed(await run(components.loop, {}, 300));
    expect(error).toMatchObject({ code: 'WASM_TIMEOUT', details: { timeout_ms: 300 } });
    expect(await run(components.echo, { after: 'timeout' })).toMatchObject({
      ok: true,
      output: { echo: { after: 'timeout' } },
    });
  });

  it('opens no file: path_open answers EBADF, as it does for the same module', async () => {
    const [asModule, asComponent] = await Promise.all([
      run(openFile.module, {}),
      run(openFile.component, {}),
    ]);
    expect(asModule).toMatchObject({ ok: true, output: { open_fd3: 8, prestat_fd3: 8 } });
    expect(asComponent.ok && asComponent.output).toEqual(asModule.ok && asModule.output);
  });

  it('refuses a component importing wasi:sockets before it runs', async () => {
    const error = failed(await run(socket));
    expect(error).toMatchObject({
      code: 'WASM_LINK_FAILED',
      details: { refused_imports: ['wasi:sockets/tcp-create-socket@0.2.0'] },
    });
    expect(error.message).toContain('no sockets');
    await expect(checkWasmBinary(socket.bytes)).rejects.toMatchObject({
      code: 'WASM_LINK_FAILED',
    });
  });

  it('refuses a call to a member of a provided interface that the sandbox does not implement', async () => {
    const error = failed(await run(future));
    expect(error).toMatchObject({
      code: 'WASM_IMPORT_REFUSED',
      details: { import: 'wasi:cli/environment.getFutureThing' },
    });
    expect((await run(components.echo, { after: 'refusal' })).ok).toBe(true);
  });

  it('checks the SHA-256 on every call: changed bytes are refused after a good copy ran', async () => {
    const good = components.echo;
    const changed = good.bytes.slice();
    changed[changed.length - 1] = changed[changed.length - 1]! ^ 0x01;
    const swapped = new Map(binaries);
    swapped.set(good.hash, changed);
    const other = createWasmRunner({ source: mapWasmSource(swapped), maxThreads: 1 });
    runners.push(other);
    expect((await run(good)).ok).toBe(true); // transpiled and compiled from the good bytes
    const error = failed(await other.run({ hash: good.hash, input: {}, timeoutMs: 5000 }));
    expect(error.code).toBe('WASM_HASH_MISMATCH');
  });

  it('caps every core module’s memory: a grower traps at the cap, runs to its end without it', async () => {
    expect(failed(await run(components.grow, {})).code).toBe('WASM_TRAP');
    const roomy = createWasmRunner({
      source: mapWasmSource(binaries),
      maxThreads: 1,
      memoryLimitMb: 128,
    });
    runners.push(roomy);
    const grown = await roomy.run({ hash: components.grow.hash, input: {}, timeoutMs: 5000 });
    // 1024 pages the guest asked for (plus the page the preview1 adapter took first)
    expect(grown).toMatchObject({ ok: true, output: { grow_failed: 0 } });
    expect(grown.ok && grown.output.pages).toBeGreaterThanOrEqual(1024);
    const error = failed(await run(components.bigMemory, {}));
    expect(error).toMatchObject({ code: 'WASM_MEMORY_LIMIT', details: { limit_pages: 64 } });
  });

  it('bounds stdout and reports a failing command as exit code 1 with its stderr', async () => {
    const flood = createWasmRunner({
      source: mapWasmSource(binaries),
      maxThreads: 1,
      maxOutputBytes: 100_000,
    });
    runners.push(flood);
    expect(
      failed(await flood.run({ hash: components.flood.hash, input: {}, timeoutMs: 5000 })),
    ).toMatchObject({ code: 'WASM_OUTPUT_TOO_LARGE', details: { limit_bytes: 100_000 } });
    const exit = await run(components.exit7, {});
    expect(failed(exit)).toMatchObject({ code: 'WASM_EXIT_NONZERO', details: { exit_code: 1 } });
    expect(exit.stderr).toContain('card declined by rule 7');
    // the thread's runtime state is rebuilt after the exit: the next call runs normally
    expect((await run(components.echo, { again: true })).ok).toBe(true);
  });
});
