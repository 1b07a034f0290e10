/**
 * bench wasm: per-call latency of a WASM step's guest through the runner (piscina, 2 worker
 * threads, node:wasi, in-memory stdio): cold calls (a module the thread has not compiled
 * yet: hash check, memory cap rewrite, compile, instantiate, run) and warm calls (hash check,
 * instantiate the cached module, run), p50/p99 and calls/s at 4 in flight; against, in the
 * same run, the same scoring logic as a plain JavaScript function through a piscina pool of
 * the same size (`baselines.js_*`) and called inline (`baselines.js_inline_p50_ms`). With
 * clang installed it also measures the C fraud scorer (wasi-libc) warm, and warm calls whose
 * binary is read from a SQLite device_wasm_cache on every call, as on the edge.
 *
 * The guest (WebAssembly text) reads the JSON input on stdin, sums its decimal digits and
 * prints `{"fraud_score": sum % 101}`; the JS function does the same on the same JSON text.
 *
 * Components: the same guest turned into a `wasi:cli/run` component with jco's preview1
 * adapter (`jco new guest.wasm --wasi-command`), measured warm in the same run with the same
 * runner (`metrics.component_*`), against the module's warm call
 * (`ratios.component_vs_module_warm_p50`); `component_first_call_ms` is its first call
 * (transpile, compile, run). `typed_component_*` is the typed `execute` component of
 * examples/components (a different guest: it wraps its input and makes no WASI call). Skipped,
 * with a note, when jco is not installed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import {
  cacheWasmBinary,
  createWasmRunner,
  deviceCacheWasmSource,
  ensureEdgeSchema,
  mapWasmSource,
  openStore,
  sha256Hex,
  type WasmRunner,
} from '../runtime/index.js';
import {
  clangAvailable,
  compileC,
  compileWat,
  FRAUD_SCORER_C,
} from '../test/support/wasmGuests.js';
import { type BenchOptions, type BenchResult, percentile, round } from './harness.js';
import { score } from './wasm/jsWorker.mjs';
import { wasiCommandComponent } from './wasm/component.js';

const THREADS = 2;
const IN_FLIGHT = 4;

const INPUT = {
  amount_minor: 125_000,
  currency: 'EUR',
  country: 'US',
  card_present: false,
  attempts_last_hour: 3,
  merchant: { id: 'm-4471', mcc: 5411, terminal: 'pos-17' },
  card: { token: 'tok_9f2c1e', last4: '4242', expiry: '12/29' },
};

/** The scoring guest; `variant` changes a data segment only, so each variant has its own hash. */
const guestWat = (variant: number) => `
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 200) "{\\"fraud_score\\":")
  (data (i32.const 240) "}")
  (data (i32.const 300) "variant-${variant}")
  (func $write (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start")
    (local $total i32) (local $n i32) (local $i i32) (local $c i32) (local $sum i32) (local $at i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 1024) (local.get $total)))
        (i32.store (i32.const 4) (i32.const 8192))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $n (i32.load (i32.const 8)))
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $total (i32.add (local.get $total) (local.get $n)))
        (br $more)))
    (block $end
      (loop $scan
        (br_if $end (i32.ge_u (local.get $i) (local.get $total)))
        (local.set $c (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
        (if (i32.and (i32.ge_u (local.get $c) (i32.const 48)) (i32.le_u (local.get $c) (i32.const 57)))
          (then (local.set $sum (i32.add (local.get $sum) (i32.sub (local.get $c) (i32.const 48))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (local.set $sum (i32.rem_u (local.get $sum) (i32.const 101)))
    (local.set $at (i32.const 100))
    (loop $digit
      (local.set $at (i32.sub (local.get $at) (i32.const 1)))
      (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $sum) (i32.const 10))))
      (local.set $sum (i32.div_u (local.get $sum) (i32.const 10)))
      (br_if $digit (local.get $sum)))
    (call $write (i32.const 200) (i32.const 15))
    (call $write (local.get $at) (i32.sub (i32.const 100) (local.get $at)))
    (call $write (i32.const 240) (i32.const 1))))
`;

interface Latencies {
  p50: number;
  p99: number;
}

function summarize(samples: number[]): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) };
}

async function timed(count: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await call(i);
    samples.push(performance.now() - t0);
  }
  return samples;
}

/** Calls per second with `IN_FLIGHT` calls outstanding for `seconds`. */
async function throughput(seconds: number, call: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const deadline = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) {
        await call();
        count++;
      }
    }),
  );
  return round(count / ((performance.now() - t0) / 1000));
}

async function checked(runner: WasmRunner, hash: string, input: unknown): Promise<unknown> {
  const result = await runner.run({ hash, input, timeoutMs: 5000 });
  if (!result.ok) throw result.error;
  return result.output;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const { scale, progress } = options;
  const notes: string[] = [
    `${THREADS} worker threads; throughput with ${IN_FLIGHT} calls in flight`,
    'binaries from memory (mapWasmSource) unless named sqlite; the SHA-256 is verified on every call',
  ];
  const coldCount = Math.max(5, Math.round(40 * scale));
  const warmCount = Math.max(50, Math.round(3000 * scale));
  const seconds = Math.max(0.5, 3 * scale);

  const variants = await Promise.all(
    Array.from({ length: coldCount + 1 }, (_, i) => compileWat(guestWat(i))),
  );
  const warmGuest = variants[0]!;
  const binaries = new Map(variants.map((g) => [g.hash, g.bytes]));
  const runner = createWasmRunner({ source: mapWasmSource(binaries), maxThreads: THREADS });
  const expected = score(INPUT);
  const pool = new Piscina<{ input: unknown }, unknown>({
    filename: fileURLToPath(new URL('./wasm/jsWorker.mjs', import.meta.url)),
    minThreads: THREADS,
    maxThreads: THREADS,
  });
  try {
    progress('wasm: starting threads');
    const first = await checked(runner, warmGuest.hash, INPUT);
    if (JSON.stringify(first) !== JSON.stringify(expected))
      throw new Error(
        `guest and JS disagree: ${JSON.stringify(first)} vs ${JSON.stringify(expected)}`,
      );
    // Both threads compile the warm module before anything is timed.
    await Promise.all(Array.from({ length: 8 }, () => checked(runner, warmGuest.hash, INPUT)));

    progress(`wasm: ${coldCount} cold calls (a module new to the thread each)`);
    const cold = summarize(
      await timed(coldCount, (i) => checked(runner, variants[i + 1]!.hash, INPUT)),
    );
    progress(`wasm: ${warmCount} warm calls`);
    await timed(100, () => checked(runner, warmGuest.hash, INPUT));
    const warm = summarize(await timed(warmCount, () => checked(runner, warmGuest.hash, INPUT)));
    progress(`wasm: throughput for ${seconds} s`);
    const wasmRate = await throughput(seconds, () => checked(runner, warmGuest.hash, INPUT));

    progress('js baseline: the same logic through a piscina pool, then inline');
    await Promise.all(Array.from({ length: 8 }, () => pool.run({ input: INPUT })));
    await timed(100, () => pool.run({ input: INPUT }));
    const js = summarize(await timed(warmCount, () => pool.run({ input: INPUT })));
    const jsRate = await throughput(seconds, () => pool.run({ input: INPUT }));
    const inline = summarize(await timed(warmCount, () => Promise.resolve(score(INPUT))));

    const metrics: Record<string, number | null> = {
      warm_p50_ms: warm.p50,
      warm_p99_ms: warm.p99,
      cold_p50_ms: cold.p50,
      cold_p99_ms: cold.p99,
      calls_per_s: wasmRate,
      guest_bytes: warmGuest.bytes.length,
      c_warm_p50_ms: null,
      c_warm_p99_ms: null,
      c_cold_ms: null,
      sqlite_warm_p50_ms: null,
      component_warm_p50_ms: null,
      component_warm_p99_ms: null,
      component_first_call_ms: null,
      component_bytes: null,
      typed_component_warm_p50_ms: null,
      typed_component_warm_p99_ms: null,
    };
    let componentRatio: number | null = null;
    let typedRatio: number | null = null;

    const component = await wasiCommandComponent(warmGuest.bytes);
    if (component) {
      progress(`wasm: ${warmCount} warm calls of the same guest as a wasi:cli/run component`);
      binaries.set(component.hash, component.bytes);
      const t0 = performance.now();
      const firstOutput = await checked(runner, component.hash, INPUT);
      metrics.component_first_call_ms = round(performance.now() - t0);
      if (JSON.stringify(firstOutput) !== JSON.stringify(expected))
        throw new Error(`component and module disagree: ${JSON.stringify(firstOutput)}`);
      await Promise.all(Array.from({ length: 8 }, () => checked(runner, component.hash, INPUT)));
      await timed(100, () => checked(runner, component.hash, INPUT));
      // interleaved with module calls, so both see the same machine
      const moduleSamples: number[] = [];
      const componentSamples: number[] = [];
      for (let i = 0; i < warmCount; i++) {
        let t = performance.now();
        await checked(runner, warmGuest.hash, INPUT);
        moduleSamples.push(performance.now() - t);
        t = performance.now();
        await checked(runner, component.hash, INPUT);
        componentSamples.push(performance.now() - t);
      }
      const moduleWarm = summarize(moduleSamples);
      const componentWarm = summarize(componentSamples);
      metrics.component_warm_p50_ms = componentWarm.p50;
      metrics.component_warm_p99_ms = componentWarm.p99;
      metrics.component_module_warm_p50_ms = moduleWarm.p50;
      metrics.component_module_warm_p99_ms = moduleWarm.p99;
      metrics.component_bytes = component.bytes.length;
      componentRatio = moduleWarm.p50 > 0 ? round(componentWarm.p50 / moduleWarm.p50) : null;

      progress('wasm: the typed component of examples/components (no WASI calls)');
      const typed = new Uint8Array(
        readFileSync(new URL('../examples/components/typed.component.wasm', import.meta.url)),
      );
      const typedHash = sha256Hex(typed);
      binaries.set(typedHash, typed);
      await Promise.all(Array.from({ length: 8 }, () => checked(runner, typedHash, INPUT)));
      const typedWarm = summarize(await timed(warmCount, () => checked(runner, typedHash, INPUT)));
      metrics.typed_component_warm_p50_ms = typedWarm.p50;
      metrics.typed_component_warm_p99_ms = typedWarm.p99;
      typedRatio = warm.p50 > 0 ? round(typedWarm.p50 / warm.p50) : null;
      notes.push(
        `component: ${component.bytes.length} bytes (the ${warmGuest.bytes.length}-byte module + jco's preview1 adapter); module and component calls interleaved`,
      );
    } else notes.push('@bytecodealliance/jco not installed: components were not measured');

    let scorer: ReturnType<typeof compileC> | undefined;
    try {
      scorer = clangAvailable ? compileC(FRAUD_SCORER_C) : undefined;
    } catch (error) {
      notes.push(`clang failed to build the C guest: ${String(error).split('\n')[0]}`);
    }
    if (scorer) {
      progress('wasm: C fraud scorer (clang + wasi-libc)');
      binaries.set(scorer.hash, scorer.bytes);
      const t0 = performance.now();
      await checked(runner, scorer.hash, INPUT);
      metrics.c_cold_ms = round(performance.now() - t0);
      await Promise.all(Array.from({ length: 8 }, () => checked(runner, scorer.hash, INPUT)));
      const c = summarize(await timed(warmCount, () => checked(runner, scorer.hash, INPUT)));
      metrics.c_warm_p50_ms = c.p50;
      metrics.c_warm_p99_ms = c.p99;
      notes.push(`C guest: ${scorer.bytes.length} bytes (clang -O2, wasi-libc)`);
    } else if (!clangAvailable) notes.push('clang not installed: the C guest was not measured');

    progress('wasm: warm calls reading the binary from SQLite device_wasm_cache');
    const dir = mkdtempSync(join(tmpdir(), 'saffron-bench-wasm-'));
    const store = await openStore(join(dir, 'edge.db'));
    const edgeRunner = createWasmRunner({
      source: deviceCacheWasmSource(store),
      maxThreads: THREADS,
    });
    try {
      await ensureEdgeSchema(store);
      await cacheWasmBinary(store, warmGuest.bytes);
      await Promise.all(
        Array.from({ length: 8 }, () => checked(edgeRunner, warmGuest.hash, INPUT)),
      );
      metrics.sqlite_warm_p50_ms = summarize(
        await timed(warmCount, () => checked(edgeRunner, warmGuest.hash, INPUT)),
      ).p50;
    } finally {
      await edgeRunner.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }

    return {
      bench: 'wasm',
      metrics,
      baselines: {
        js_p50_ms: js.p50,
        js_p99_ms: js.p99,
        js_calls_per_s: jsRate,
        js_inline_p50_ms: inline.p50,
      },
      ratios: {
        warm_vs_js_p50: js.p50 > 0 ? round(warm.p50 / js.p50) : null,
        calls_vs_js: jsRate > 0 ? round(wasmRate / jsRate) : null,
        cold_vs_warm_p50: warm.p50 > 0 ? round(cold.p50 / warm.p50) : null,
        component_vs_module_warm_p50: componentRatio,
        typed_component_vs_module_warm_p50: typedRatio,
      },
      notes,
    };
  } finally {
    await runner.close();
    await pool.destroy();
  }
}
