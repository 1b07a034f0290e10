/**
 * Runs WASM guests on a piscina pool of worker threads (docs/architecture.md#chosen-dependencies: node:wasi preview1 in
 * piscina workers), so a guest never blocks the engine's event loop (spec: "the runtime does
 * not block other work while it runs").
 *
 * Per call, on the engine's thread: read the binary from the {@link WasmBinarySource} (every
 * call: the hash must be checked against what is stored now, not what was stored when a
 * thread first compiled it), then hand bytes, input and limits to a thread, which verifies the
 * SHA-256, compiles or reuses its compiled module, and runs the guest (see `worker.ts`). A
 * component (told apart by its header, kind.ts) also carries its transpilation, made once per
 * hash and process (transpile.ts); the thread still verifies the component's own bytes.
 *
 * Timeout. `timeout_ms` bounds the guest's execution, measured from the moment a thread picks
 * the call up, so a call queued behind busy threads or behind a thread still booting is not
 * charged for the wait. The thread writes that moment into a shared cell; the timer, armed at
 * dispatch, reads it when it fires and waits out the rest (or, not started yet, another
 * `timeout_ms`). Nothing wakes this thread when the call starts, so a call costs it one
 * wake-up, for the answer. When the timeout elapses, the call's AbortSignal fires and piscina
 * terminates the thread running it — the only way to stop a guest spinning in a loop, since a
 * thread running WebAssembly never returns to its event loop — and starts a replacement, so the
 * pool keeps its size. The compiled modules cached in the terminated thread are lost with it;
 * the next call on the new thread compiles again.
 *
 * The pool starts on the first call, so a runtime whose workflows have no WASM step never
 * starts threads. Runners may share one pool ({@link createWasmThreadPool}), as the runtimes
 * of many edge agents in one process do.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { toError } from '../errors.js';
import type { JsonObject } from '../model/json.js';
import { epochMs } from './clock.js';
import { WasmError, type WasmErrorCode } from './errors.js';
import { WASM_PAGE_BYTES } from './memoryLimit.js';
import { hasComponentHeader } from './kind.js';
import type { WasmBinarySource } from './source.js';
import { componentArtifacts, type ComponentArtifacts } from './transpile.js';
import type { WasmTask, WasmTaskOutcome, WasmThreadStats } from './worker.js';

/** Options of {@link createWasmRunner}. */
export interface WasmRunnerOptions {
  /** Where binaries come from, by hash. */
  source: WasmBinarySource;
  /** Most guests running at once, one per thread (default 2, at most the core count). */
  maxThreads?: number;
  /** Linear-memory cap of one guest in MiB (default 256). */
  memoryLimitMb?: number;
  /** Most bytes a guest may write on stdout (default 1 MiB). */
  maxOutputBytes?: number;
  /**
   * Threads shared with other runners (their owner closes them): a process hosting many
   * edge agents — each with its own runtime — gives them one pool instead of starting
   * `maxThreads` threads per agent. By default the runner owns a pool of `maxThreads`.
   */
  threads?: WasmThreadPool;
}

/** Worker threads that run WASM tasks; {@link createWasmRunner} runners may share one. */
export interface WasmThreadPool {
  /** Run one task on a thread (started on the first call). */
  run(task: WasmTask, options: { signal: AbortSignal }): Promise<WasmTaskOutcome>;
  /** Stop the threads. */
  close(): Promise<void>;
}

/** Limits of a runner that a caller may set. */
export type WasmLimits = Omit<WasmRunnerOptions, 'source'>;

/** One guest execution. */
export interface WasmCall {
  /** SHA-256 of the binary, 64 lowercase hex characters. */
  hash: string;
  /** Export to call on a reactor module (default `execute`); commands run `_start`. */
  entrypoint?: string;
  /** The JSON value the guest reads on stdin. */
  input: unknown;
  /** Execution time limit in milliseconds. */
  timeoutMs: number;
  /** Aborting it gives up on the call (engine shutdown); the thread is terminated. */
  signal?: AbortSignal;
}

/** How a call ended. `stderr` is what the guest wrote there (first 4 KiB). */
export type WasmCallResult =
  | { ok: true; output: JsonObject; stderr: string; thread: WasmThreadStats }
  | { ok: false; error: WasmError; stderr: string; thread?: WasmThreadStats };

/** Runs WASM guests. */
export interface WasmRunner {
  /** Run one guest. Resolves (never rejects) with the output or what went wrong. */
  run(call: WasmCall): Promise<WasmCallResult>;
  /** Stop the threads. Calls after this resolve with WASM_RUNNER_CLOSED. */
  close(): Promise<void>;
}

/** Default linear-memory cap of a guest, MiB. */
export const DEFAULT_WASM_MEMORY_LIMIT_MB = 256;
/** Default stdout limit of a guest, bytes. */
export const DEFAULT_WASM_MAX_OUTPUT_BYTES = 1024 * 1024;
const STDERR_KEPT_BYTES = 4096;

/** The piscina entry: the compiled worker when there is one, else the tsx bootstrap. */
function workerFilename(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const compiled = path.join(here, 'worker.js');
  return existsSync(compiled) ? compiled : path.join(here, 'workerBootstrap.mjs');
}

function failure(
  code: WasmErrorCode,
  message: string,
  options: { cause?: unknown; details?: Record<string, unknown> } = {},
): WasmCallResult {
  return { ok: false, error: new WasmError(code, message, options), stderr: '' };
}

/** A pool of at most `maxThreads` (and at most the core count) threads, started on first use. */
export function createWasmThreadPool(maxThreads = 2): WasmThreadPool {
  const size = Math.max(1, Math.min(maxThreads, availableParallelism()));
  let pool: Piscina<WasmTask, WasmTaskOutcome> | undefined;
  return {
    run(task, options) {
      pool ??= new Piscina<WasmTask, WasmTaskOutcome>({
        filename: workerFilename(),
        minThreads: size,
        maxThreads: size,
      });
      return pool.run(task, options);
    },
    close: () => (pool ? pool.destroy() : Promise.resolve()),
  };
}

/** Create a runner; its threads start with the first call. */
export function createWasmRunner(options: WasmRunnerOptions): WasmRunner {
  const threads = options.threads ?? createWasmThreadPool(options.maxThreads);
  const memoryLimitMb = options.memoryLimitMb ?? DEFAULT_WASM_MEMORY_LIMIT_MB;
  const maxMemoryPages = Math.floor((memoryLimitMb * 2 ** 20) / WASM_PAGE_BYTES);
  if (!(maxMemoryPages >= 1 && maxMemoryPages <= 65_536))
    throw new RangeError(`memoryLimitMb must be between 1 and 4096, got ${memoryLimitMb}`);
  const maxStdoutBytes = options.maxOutputBytes ?? DEFAULT_WASM_MAX_OUTPUT_BYTES;
  let closing: Promise<void> | undefined;

  async function execute(
    call: WasmCall,
    bytes: Uint8Array,
    component?: ComponentArtifacts,
  ): Promise<WasmCallResult> {
    const started = new BigInt64Array(new SharedArrayBuffer(8));
    const task: WasmTask = {
      ...(component ? { component } : {}),
      hash: call.hash,
      bytes,
      entrypoint: call.entrypoint ?? 'execute',
      stdin: JSON.stringify(call.input),
      maxMemoryPages,
      maxStdoutBytes,
      maxStderrBytes: STDERR_KEPT_BYTES,
      started,
    };
    const controller = new AbortController();
    let timedOut = false;
    const check = () => {
      const at = Atomics.load(started, 0);
      const left = at === 0n ? call.timeoutMs : call.timeoutMs - (epochMs() - Number(at) / 1000);
      if (at !== 0n && left <= 0) {
        timedOut = true;
        controller.abort(new Error('timeout'));
      } else timer = setTimeout(check, left);
    };
    let timer = setTimeout(check, call.timeoutMs);
    const onAbort = () => controller.abort(call.signal?.reason);
    call.signal?.addEventListener('abort', onAbort, { once: true });
    let outcome: WasmTaskOutcome;
    try {
      outcome = await threads.run(task, { signal: controller.signal });
    } catch (cause) {
      if (timedOut)
        return failure(
          'WASM_TIMEOUT',
          `timed out after ${call.timeoutMs} ms; the worker thread running it was terminated`,
          { details: { timeout_ms: call.timeoutMs } },
        );
      if (call.signal?.aborted)
        return failure('WASM_ABORTED', 'the call was aborted (the engine gave up on the step)', {
          cause: call.signal.reason,
        });
      if (closing) return failure('WASM_RUNNER_CLOSED', 'the WASM runner is closed');
      return failure('WASM_THREAD_FAILED', `the worker thread failed: ${toError(cause).message}`, {
        cause,
      });
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    }
    if (outcome.kind === 'output')
      return { ok: true, output: outcome.value, stderr: outcome.stderr, thread: outcome.thread };
    return {
      ok: false,
      error: new WasmError(
        outcome.code,
        outcome.message,
        outcome.details ? { details: outcome.details } : {},
      ),
      stderr: outcome.stderr,
      thread: outcome.thread,
    };
  }

  return {
    async run(call) {
      if (closing) return failure('WASM_RUNNER_CLOSED', 'the WASM runner is closed');
      if (call.signal?.aborted)
        return failure('WASM_ABORTED', 'the call was aborted before it started', {
          cause: call.signal.reason,
        });
      let bytes: Uint8Array | undefined;
      try {
        bytes = await options.source.read(call.hash);
      } catch (cause) {
        if (cause instanceof WasmError) return { ok: false, error: cause, stderr: '' };
        return failure('WASM_SOURCE_FAILED', `cannot read the binary: ${toError(cause).message}`, {
          cause,
        });
      }
      if (bytes === undefined)
        return failure('WASM_MODULE_NOT_FOUND', 'no binary with this hash is stored here');
      if (!hasComponentHeader(bytes)) return execute(call, bytes);
      let component: ComponentArtifacts;
      try {
        component = await componentArtifacts(call.hash, bytes);
      } catch (cause) {
        if (cause instanceof WasmError) return { ok: false, error: cause, stderr: '' };
        return failure('WASM_TRANSPILE_FAILED', `cannot transpile: ${toError(cause).message}`, {
          cause,
        });
      }
      return execute(call, bytes, component);
    },
    close() {
      // shared threads are their owner's to stop
      closing ??= options.threads ? Promise.resolve() : threads.close();
      return closing;
    },
  };
}
