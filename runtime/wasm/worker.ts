/**
 * The worker-thread side of WASM steps (see `runner.ts`): verify, compile (once per thread),
 * instantiate and run one guest, and answer with a plain {@link WasmTaskOutcome}.
 *
 * Module rule. A module that exports `_start` is a WASI command: `_start` runs (the C/Rust
 * `main`), whatever the step's `entrypoint` says — calling any other export of a command
 * would skip its libc start-up. A module without `_start` is a reactor: `_initialize` runs if
 * exported, then the `entrypoint` export (default `execute`), which must take no parameters;
 * its return value, if a number, is the exit code. Both read stdin and write stdout the same
 * way, and `proc_exit(n)` ends either with code n.
 *
 * Each call gets a fresh instance (fresh linear memory, fresh WASI state), so nothing leaks
 * from one execution to the next; only the compiled `WebAssembly.Module` is reused, keyed by
 * hash — and the memory's allocation: a module's memory is provided by the thread
 * (hostMemory.ts) and handed to the next call zero-filled at its initial size, as a fresh one
 * would be. The hash is verified on every call before the cache is consulted, so a tampered
 * binary never runs even when a good copy was compiled earlier.
 *
 * Components (told apart on the engine's thread, which sends their transpilation along) take
 * the same path up to the hash check, then run through jco's code (componentWorker.ts): the
 * same stdio buffers and limits, a fresh instance per call, its outcomes mapped to the same
 * codes plus WASM_GUEST_ERROR and WASM_IMPORT_REFUSED.
 *
 * Imports stay narrow (no barrels) because every thread loads them at start-up.
 */
import { openSync } from 'node:fs';
import { devNull } from 'node:os';
import { threadId } from 'node:worker_threads';
import type { WASI as WasiClass } from 'node:wasi';
import { epochMs } from './clock.js';
import { WasmError, type WasmErrorCode } from './errors.js';
import { GuestExit, GuestIo, GuestOutputLimit, guestImports } from './guestIo.js';
import { hashMatches, sha256Hex } from './hash.js';
import { HOST_MEMORY_IMPORT, hostMemory, type HostedMemory } from './hostMemory.js';
import { capMemory, WASM_PAGE_BYTES } from './memoryLimit.js';
import { callComponent, loadComponent, type ComponentOutcome } from './componentWorker.js';
import type { ComponentArtifacts } from './transpile.js';

/** One guest execution sent to a thread. Only structured-cloneable data. */
export interface WasmTask {
  hash: string;
  bytes: Uint8Array;
  entrypoint: string;
  /** The JSON text the guest reads on stdin. */
  stdin: string;
  maxMemoryPages: number;
  maxStdoutBytes: number;
  maxStderrBytes: number;
  /**
   * Set by the thread when it starts the task, to the microseconds since the epoch
   * (clock.ts): the timeout runs from there. Zero until then.
   */
  started: BigInt64Array;
  /**
   * Set when `bytes` are a component: jco's transpilation of them (transpile.ts), shared
   * memory that is not copied per call. `bytes` are still what the hash is checked against.
   */
  component?: ComponentArtifacts;
}

/** Per-thread diagnostics returned with every outcome. */
export interface WasmThreadStats {
  threadId: number;
  /** Modules this thread has compiled since it started. */
  compiles: number;
  /** Whether this call compiled the module (false: the thread's cached copy ran). */
  compiled: boolean;
}

/** How a guest execution ended. */
export type WasmTaskOutcome =
  | { kind: 'output'; value: Record<string, unknown>; stderr: string; thread: WasmThreadStats }
  | {
      kind: 'failed';
      code: WasmErrorCode;
      message: string;
      details?: Record<string, unknown>;
      stderr: string;
      thread: WasmThreadStats;
    };

/** The parts of the WebAssembly JS API this module uses (absent from the ES lib typings). */
interface WasmExports {
  memory?: unknown;
  _start?: unknown;
  [name: string]: unknown;
}
interface WasmInstance {
  readonly exports: WasmExports;
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => WasmInstance;
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  CompileError: new () => Error;
  LinkError: new () => Error;
  RuntimeError: new () => Error;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** `node:wasi` without its one-time ExperimentalWarning on this thread's stderr. */
async function importWasi(): Promise<typeof WasiClass> {
  const emit = process.emitWarning.bind(process);
  const filtered = (warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (!/\bWASI\b/.test(text)) (emit as (...args: unknown[]) => void)(warning, ...rest);
  };
  process.emitWarning = filtered;
  try {
    return (await import('node:wasi')).WASI;
  } finally {
    process.emitWarning = emit;
  }
}
const WASI = await importWasi();

// The WASI instances' own stdio: never read or written (guestIo implements fds 0–2), only
// seen by `poll_oneoff` subscriptions. Opened once per thread, never closed by a guest.
const devNullFd = openSync(devNull, 'r+');

const newWasi = () =>
  new WASI({
    version: 'preview1',
    args: ['guest.wasm'],
    env: {},
    returnOnExit: true,
    stdin: devNullFd,
    stdout: devNullFd,
    stderr: devNullFd,
  });
type WasiFunctions = Record<string, (...args: unknown[]) => unknown>;
const functionsOf = (wasi: WasiClass) =>
  (wasi.getImportObject() as { wasi_snapshot_preview1: WasiFunctions }).wasi_snapshot_preview1;

// The call this thread is running (one at a time): its stdio and its WASI instance's functions.
let currentIo: GuestIo | undefined;
let currentWasi: WasiFunctions | undefined;

/**
 * The only preview1 functions node:wasi answers: none of them touches a descriptor or host
 * state. Every other name node:wasi offers — today's and any a later Node adds — is either
 * implemented by guestIo.ts or answers ENOSYS (deny by default).
 */
const FROM_NODE_WASI: ReadonlySet<string> = new Set([
  'args_get',
  'args_sizes_get',
  'environ_get',
  'environ_sizes_get',
  'clock_res_get',
  'clock_time_get',
  'random_get',
  'sched_yield',
  'poll_oneoff',
]);
const ENOSYS = 52;

// One import object per thread, made of plain long-lived functions: linking node:wasi's bound
// functions directly, or fresh closures per call, costs V8 ~0.1 ms per instantiation.
const ioImports = guestImports(() => currentIo!);
const imports = {
  wasi_snapshot_preview1: {
    ...Object.fromEntries(
      Object.keys(functionsOf(newWasi())).map((name) => [
        name,
        FROM_NODE_WASI.has(name)
          ? (...args: unknown[]) => currentWasi![name]!(...args)
          : () => ENOSYS,
      ]),
    ),
    ...ioImports,
  },
};

/** A compiled module, and the memories it can have again when it imports its memory. */
interface Compiled {
  module: object;
  memory?: HostedMemory;
  /** Memories of finished calls, at the initial size (hostMemory.ts). */
  spare: WasmMemory[];
}

const MAX_CACHED_MODULES = 64;
/** Memories larger than this (bytes) are not kept for the next call: zero-filling would cost more. */
const MAX_SPARE_MEMORY_BYTES = 16 * 2 ** 20;
const modules = new Map<string, Compiled>();
const components = new Map<string, ReturnType<typeof loadComponent>>();
let compiles = 0;

/** The thread's compiled copy of component `task`, compiling it on first use. */
function compileComponent(task: WasmTask, artifacts: ComponentArtifacts) {
  const key = `${task.hash}:${task.maxMemoryPages}`;
  const cached = components.get(key);
  if (cached) {
    components.delete(key);
    components.set(key, cached);
    return { loaded: cached, compiled: false };
  }
  const loaded = loadComponent(artifacts, task.maxMemoryPages);
  compiles++;
  if (components.size >= MAX_CACHED_MODULES) components.delete(components.keys().next().value!);
  components.set(key, loaded);
  return { loaded, compiled: true };
}

const STDERR_SHOWN = 4096;
const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

function compile(task: WasmTask): { entry: Compiled; compiled: boolean } {
  const key = `${task.hash}:${task.maxMemoryPages}`;
  const cached = modules.get(key);
  if (cached) {
    modules.delete(key); // re-insert: the map's order is least recently used first
    modules.set(key, cached);
    return { entry: cached, compiled: false };
  }
  const hosted = hostMemory(capMemory(task.bytes, task.maxMemoryPages));
  const entry: Compiled = {
    module: new wasm.Module(hosted.bytes),
    ...(hosted.memory ? { memory: hosted.memory } : {}),
    spare: [],
  };
  compiles++;
  if (modules.size >= MAX_CACHED_MODULES) modules.delete(modules.keys().next().value!);
  modules.set(key, entry);
  return { entry, compiled: true };
}

/** The memory a fresh instance of `entry` would get: a spare one zero-filled, else a new one. */
function memoryFor(entry: Compiled, hosted: HostedMemory): WasmMemory {
  const spare = entry.spare.pop();
  if (spare) {
    new Uint8Array(spare.buffer).fill(0);
    return spare;
  }
  return new wasm.Memory({ initial: hosted.initialPages, maximum: hosted.maximumPages });
}

/** Keep `memory` for the next call when the guest left it at its initial size. */
function release(entry: Compiled, memory: WasmMemory | undefined): void {
  if (!memory || !entry.memory || entry.spare.length > 0) return;
  const bytes = entry.memory.initialPages * WASM_PAGE_BYTES;
  if (memory.buffer.byteLength === bytes && bytes <= MAX_SPARE_MEMORY_BYTES)
    entry.spare.push(memory);
}

/** What went wrong, on its way to becoming an outcome (never leaves this thread). */
class Failure extends Error {
  override readonly name = 'Failure';
  constructor(
    readonly code: WasmErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Run the guest; returns its exit code. Throws a Failure for what is not an exit. */
function execute(entry: Compiled, task: WasmTask, io: GuestIo): number {
  const wasi = newWasi();
  currentIo = io;
  currentWasi = functionsOf(wasi);
  let memory: WasmMemory | undefined;
  try {
    let instance: WasmInstance;
    try {
      const hosted = entry.memory;
      if (hosted) memory = memoryFor(entry, hosted);
      instance = new wasm.Instance(
        entry.module,
        memory
          ? { ...imports, [HOST_MEMORY_IMPORT.module]: { [HOST_MEMORY_IMPORT.field]: memory } }
          : imports,
      );
    } catch (error) {
      // A missing import module is a TypeError, a missing or mistyped import a LinkError.
      if (error instanceof wasm.LinkError || error instanceof TypeError)
        throw new Failure(
          'WASM_LINK_FAILED',
          `cannot link: ${describe(error)} (the sandbox provides only wasi_snapshot_preview1 functions)`,
        );
      if (error instanceof RangeError)
        throw new Failure(
          'WASM_MEMORY_LIMIT',
          `cannot allocate the module's memory: ${describe(error)}`,
        );
      if (error instanceof GuestExit) return error.code; // a start function called proc_exit
      throw error;
    }
    const { exports } = instance;
    if (!(exports.memory instanceof wasm.Memory))
      throw new Failure('WASM_INVALID_MODULE', "the module must export its memory as 'memory'");
    io.bind(exports.memory);
    try {
      if (typeof exports._start === 'function') {
        if (exports._initialize !== undefined)
          throw new Failure(
            'WASM_INVALID_MODULE',
            'the module exports both _start and _initialize; a WASI module is a command or a reactor, not both',
          );
        return wasi.start(instance);
      }
      const entry = exports[task.entrypoint];
      if (typeof entry !== 'function')
        throw new Failure(
          'WASM_ENTRYPOINT_MISSING',
          `the module exports neither _start nor a function named '${task.entrypoint}'`,
        );
      if (entry.length > 0)
        throw new Failure(
          'WASM_ENTRYPOINT_MISSING',
          `entrypoint '${task.entrypoint}' takes ${entry.length} parameter(s); it must take none (input comes on stdin)`,
        );
      wasi.initialize(instance);
      const returned: unknown = (entry as () => unknown)();
      if (typeof returned === 'number') return returned >>> 0;
      if (typeof returned === 'bigint') return returned === 0n ? 0 : 1;
      return 0;
    } catch (error) {
      if (error instanceof GuestExit) return error.code;
      throw error;
    }
  } finally {
    currentIo = undefined;
    currentWasi = undefined;
    release(entry, memory);
  }
}

function parseOutput(bytes: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new Failure('WASM_OUTPUT_INVALID', 'stdout is not valid UTF-8');
  }
  if (text.trim() === '')
    throw new Failure(
      'WASM_OUTPUT_INVALID',
      'the module wrote nothing on stdout; expected one JSON object',
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const preview = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    throw new Failure(
      'WASM_OUTPUT_INVALID',
      `stdout is not valid JSON (${describe(error)}): ${JSON.stringify(preview)}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Failure(
      'WASM_OUTPUT_INVALID',
      `stdout must be one JSON object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`,
    );
  return value as Record<string, unknown>;
}

/** Run a component call; returns its output object. Throws a Failure for the rest. */
function runComponent(
  task: WasmTask,
  artifacts: ComponentArtifacts,
  io: GuestIo,
  setCompiled: (compiled: boolean) => void,
): Record<string, unknown> {
  let loaded: ReturnType<typeof loadComponent>;
  try {
    const result = compileComponent(task, artifacts);
    loaded = result.loaded;
    setCompiled(result.compiled);
  } catch (error) {
    if (error instanceof WasmError) throw new Failure(error.code, error.message, error.details);
    throw new Failure('WASM_INVALID_MODULE', `cannot compile the component: ${describe(error)}`);
  }
  let outcome: ComponentOutcome;
  try {
    outcome = callComponent(loaded, artifacts.entry, task.entrypoint, task.stdin, io);
  } catch (error) {
    if (error instanceof RangeError && /memory/i.test(error.message))
      throw new Failure(
        'WASM_MEMORY_LIMIT',
        `cannot allocate the component's memory: ${describe(error)}`,
      );
    throw error;
  }
  switch (outcome.kind) {
    case 'exit':
      if (outcome.code !== 0)
        throw new Failure('WASM_EXIT_NONZERO', `exit code ${outcome.code}`, {
          exit_code: outcome.code,
        });
      return parseOutput(io.stdout());
    case 'returned': {
      const bytes = encoder.encode(outcome.text);
      if (bytes.length > task.maxStdoutBytes) throw new GuestOutputLimit(task.maxStdoutBytes);
      return parseOutput(bytes);
    }
    case 'guest-error':
      throw new Failure('WASM_GUEST_ERROR', `the component returned an error: ${outcome.message}`, {
        guest_error: outcome.message,
      });
    case 'refused':
      throw new Failure(
        'WASM_IMPORT_REFUSED',
        `the component called ${outcome.member}, which the sandbox refuses (no filesystem, sockets or other host access)`,
        { import: outcome.member },
      );
    case 'no-entrypoint':
      throw new Failure(
        'WASM_ENTRYPOINT_MISSING',
        `the component exports no function named '${task.entrypoint}' (it exports: ${outcome.exported.join(', ') || 'none'})`,
      );
    default: {
      const never: never = outcome;
      throw new Error(`unexpected outcome ${JSON.stringify(never)}`);
    }
  }
}

/** piscina's task handler. Never throws for what the guest does. */
export default function runWasmTask(task: WasmTask): WasmTaskOutcome {
  Atomics.store(task.started, 0, BigInt(Math.round(epochMs() * 1000)));
  let compiled = false;
  const thread = () => ({ threadId, compiles, compiled });
  const io = new GuestIo({
    stdin: encoder.encode(task.stdin),
    maxStdoutBytes: task.maxStdoutBytes,
    maxStderrBytes: Math.min(task.maxStderrBytes, STDERR_SHOWN),
  });
  const stderr = () => {
    const { text, truncated } = io.stderr();
    return truncated ? `${text}… (truncated)` : text;
  };
  try {
    if (!hashMatches(task.bytes, task.hash)) {
      const actual = sha256Hex(task.bytes);
      throw new Failure(
        'WASM_HASH_MISMATCH',
        `the stored binary hashes to ${actual}, not to the requested hash: refusing to run it`,
        { actual_hash: actual },
      );
    }
    if (task.component) {
      const value = runComponent(task, task.component, io, (c) => (compiled = c));
      return { kind: 'output', value, stderr: stderr(), thread: thread() };
    }
    let entry: Compiled;
    try {
      ({ entry, compiled } = compile(task));
    } catch (error) {
      if (error instanceof WasmError) throw new Failure(error.code, error.message, error.details);
      throw new Failure('WASM_INVALID_MODULE', `cannot compile the module: ${describe(error)}`);
    }
    const exitCode = execute(entry, task, io);
    if (exitCode !== 0)
      throw new Failure('WASM_EXIT_NONZERO', `exit code ${exitCode}`, { exit_code: exitCode });
    return { kind: 'output', value: parseOutput(io.stdout()), stderr: stderr(), thread: thread() };
  } catch (error) {
    let failure: Failure;
    if (error instanceof Failure) failure = error;
    else if (error instanceof GuestOutputLimit)
      failure = new Failure(
        'WASM_OUTPUT_TOO_LARGE',
        `the module wrote more than ${error.limit} bytes on stdout`,
        { limit_bytes: error.limit },
      );
    else if (error instanceof wasm.RuntimeError || error instanceof RangeError)
      failure = new Failure('WASM_TRAP', `trap: ${describe(error)}`);
    else failure = new Failure('WASM_TRAP', `the module failed: ${describe(error)}`);
    return {
      kind: 'failed',
      code: failure.code,
      message: failure.message,
      ...(failure.details ? { details: failure.details } : {}),
      stderr: stderr(),
      thread: thread(),
    };
  }
}
