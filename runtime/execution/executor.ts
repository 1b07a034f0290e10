/**
 * Execution providers: where a step function runs. `inline` (this one) calls it in the
 * engine's own process; the thread-pool and PostgreSQL-queue providers plug in behind the
 * same interface.
 */
import type { JsonObject } from '../model/json.js';
import { resolveStepFunction } from '../definition/index.js';
import type { StepContext } from './context.js';

/** A step function: `(state, context) => object | void`, sync or async. */
export type StepFunction = (state: JsonObject, context: StepContext) => unknown;

/** Runs step functions by path. */
export interface StepExecutor {
  /** Call the function at `functionPath` and return what it returned (or throw what it threw). */
  call(functionPath: string, state: JsonObject, context: StepContext): Promise<unknown>;
  /** Release resources (worker threads, connections). */
  close(): Promise<void>;
}

/** Calls step functions in this process, importing each module once. */
export function inlineExecutor(options: { stepsRoot: string }): StepExecutor {
  const cache = new Map<string, Promise<StepFunction>>();
  const load = (path: string): Promise<StepFunction> => {
    let fn = cache.get(path);
    if (!fn) {
      fn = resolveStepFunction(path, options.stepsRoot).then((r) => r.fn as StepFunction);
      fn.catch(() => cache.delete(path));
      cache.set(path, fn);
    }
    return fn;
  };
  return {
    async call(functionPath, state, context) {
      const fn = await load(functionPath);
      return fn(state, context);
    },
    close: () => Promise.resolve(),
  };
}
