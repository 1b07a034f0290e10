/**
 * The worker-thread side of components (see transpile.ts, worker.ts): compile a component's
 * core modules and jco's `instantiate` once per thread and hash, then give every call a fresh
 * instance wired to Saffron's WASI 0.2 host (componentHost.ts).
 *
 * Every core module is compiled with its memories capped (memoryLimit.ts), exactly as a
 * preview1 module is, so a component cannot grow past the runner's memory limit either. The
 * generated JavaScript is evaluated once per thread as a function body; it never imports
 * anything, and all it can reach is what `instantiate` is given.
 *
 * A `wasi:cli/run` component runs like a preview1 command: its stdin is the JSON input, its
 * stdout must be one JSON object. A typed component's function is called with the JSON text
 * and returns the JSON text of the output, or `err(message)` (WASM_GUEST_ERROR).
 */
import { GuestExit, type GuestIo } from './guestIo.js';
import { componentImports, HostRefusal } from './componentHost.js';
import { capMemory } from './memoryLimit.js';
import { REAL_GLOBAL_PARAMETER, type ComponentArtifacts } from './transpile.js';

type Instantiate = (
  getCoreModule: (name: string) => object,
  imports: Record<string, object>,
) => unknown;

interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** A component ready to instantiate on this thread. */
interface LoadedComponent {
  /** Evaluates jco's runtime afresh and returns its `instantiate` (transpile.ts). */
  factory: () => Instantiate;
  instantiate: Instantiate;
  modules: Map<string, object>;
}

/** What a component call produced. */
export type ComponentOutcome =
  | { kind: 'exit'; code: number }
  | { kind: 'returned'; text: string }
  | { kind: 'guest-error'; message: string }
  | { kind: 'refused'; member: string }
  | { kind: 'no-entrypoint'; exported: string[] };

const decoder = new TextDecoder();

/** Compile `artifacts` for this thread (core modules capped at `maxMemoryPages`). */
export function loadComponent(
  artifacts: ComponentArtifacts,
  maxMemoryPages: number,
): LoadedComponent {
  const modules = new Map<string, object>();
  for (const { name, bytes } of artifacts.cores)
    modules.set(name, new wasm.Module(capMemory(bytes.slice(), maxMemoryPages)));
  // The text is jco's output for bytes whose hash was verified before transpiling (transpile.ts)
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const body = new Function(REAL_GLOBAL_PARAMETER, decoder.decode(artifacts.source)) as (
    realGlobal: typeof globalThis,
  ) => Instantiate;
  const factory = () => body(globalThis);
  return { factory, instantiate: factory(), modules };
}

let currentIo: GuestIo | undefined;
let imports: Record<string, object> | undefined;

function isComponentError(error: unknown): error is { payload: unknown } {
  return typeof error === 'object' && error !== null && 'payload' in error;
}

function describePayload(payload: unknown): string {
  const text = typeof payload === 'string' ? payload : (JSON.stringify(payload) ?? String(payload));
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/**
 * Instantiate `loaded` and call it: `wasi:cli/run` for a command, else the export named
 * `entrypoint` with `input`. Exits, host refusals and typed errors become outcomes; traps
 * and the stdout limit propagate.
 */
export function callComponent(
  loaded: LoadedComponent,
  entry: ComponentArtifacts['entry'],
  entrypoint: string,
  input: string,
  io: GuestIo,
): ComponentOutcome {
  imports ??= componentImports(() => currentIo!);
  currentIo = io;
  let clean = false;
  try {
    const exports = loaded.instantiate((name) => {
      const module = loaded.modules.get(name);
      if (!module) throw new Error(`the component has no core module ${name}`);
      return module;
    }, imports) as Record<string, unknown>;
    if (exports instanceof Promise)
      throw new Error('the component needs asynchronous instantiation, which is not supported');
    if (entry.kind === 'command') {
      const run = (exports[entry.exportName] as { run?: () => void } | undefined)?.run;
      if (typeof run !== 'function') throw new Error(`${entry.exportName} has no run function`);
      try {
        run();
      } catch (error) {
        if (isComponentError(error)) return { kind: 'exit', code: 1 }; // run returned err
        throw error;
      }
      clean = true;
      return { kind: 'exit', code: 0 };
    }
    const fn = exports[entrypoint];
    if (typeof fn !== 'function')
      return { kind: 'no-entrypoint', exported: entry.kind === 'functions' ? entry.names : [] };
    try {
      const returned: unknown = (fn as (input: string) => unknown)(input);
      clean = true;
      if (typeof returned !== 'string')
        return {
          kind: 'guest-error',
          message: `'${entrypoint}' must return a string (the output's JSON text), got ${typeof returned}`,
        };
      return { kind: 'returned', text: returned };
    } catch (error) {
      if (isComponentError(error))
        return { kind: 'guest-error', message: describePayload(error.payload) };
      throw error;
    }
  } catch (error) {
    if (error instanceof GuestExit) return { kind: 'exit', code: error.code };
    if (error instanceof HostRefusal) return { kind: 'refused', member: error.member };
    throw error;
  } finally {
    currentIo = undefined;
    // jco's bookkeeping may be mid-task after an exit, a trap or a refusal: start it afresh
    if (!clean) loaded.instantiate = loaded.factory();
  }
}
