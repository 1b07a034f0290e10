/**
 * The worker-thread side of the `threads` execution provider (see `threadsExecutor.ts`).
 *
 * Everything crossing the thread boundary is structured-cloned, which drops functions, class
 * prototypes and every field of an `Error` but its message and stack. So this module never lets
 * a step's result or failure travel raw: it answers each task with a plain {@link ThreadOutcome}
 * the main thread turns back into a return value or an error. It also checks that outcome can
 * be cloned before handing it to piscina — a failed `postMessage` there would crash the thread
 * instead of failing the one step.
 *
 * Imports stay narrow (no `index.js` barrels) because every thread loads them at start-up.
 */
import type { JsonObject } from '../model/json.js';
import type { LogLevel } from '../model/statuses.js';
import { resolveStepFunction } from '../definition/functionPath.js';
import { envSecrets } from '../template/secrets.js';
import type { StepContext, StepLogger } from './context.js';
import type { StepFunction } from './executor.js';

/** One step call sent to a thread. Only structured-cloneable data. */
export interface ThreadTask {
  functionPath: string;
  stepsRoot: string;
  /** The step's working copy. */
  state: JsonObject;
  /** The context without `signal`, `secrets`, `log` or any function value. */
  context: Record<string, unknown>;
}

/** A `context.log` call made in the thread, replayed on the main thread. */
export interface ThreadLogEntry {
  level: LogLevel;
  message: string;
  data?: JsonObject;
}

/** An error flattened for the trip back: own fields kept so directives still read as such. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  /** Own enumerable, cloneable fields (`targetStepName`, `result`, `code`, …). */
  fields: Record<string, unknown>;
  cause?: SerializedError;
}

/**
 * How a call ended. `state` is the working copy after the call, so in-place changes reach the
 * engine as they would inline.
 */
export type ThreadOutcome =
  | { kind: 'returned'; value: unknown; state: JsonObject; logs: ThreadLogEntry[] }
  | { kind: 'threw'; error: SerializedError; state: JsonObject; logs: ThreadLogEntry[] }
  | { kind: 'uncloneable'; what: 'result' | 'state'; reason: string; logs: ThreadLogEntry[] };

const MAX_CAUSE_DEPTH = 4;

// Per-thread module cache: each thread imports a step module once.
const functions = new Map<string, Promise<StepFunction>>();

function load(functionPath: string, stepsRoot: string): Promise<StepFunction> {
  const key = `${stepsRoot}\0${functionPath}`;
  let fn = functions.get(key);
  if (!fn) {
    fn = resolveStepFunction(functionPath, stepsRoot).then((r) => r.fn as StepFunction);
    fn.catch(() => functions.delete(key));
    functions.set(key, fn);
  }
  return fn;
}

function cloneError(value: unknown): string | undefined {
  try {
    structuredClone(value);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Flatten anything thrown; a non-Error becomes an Error whose message shows the value. */
function serializeError(thrown: unknown, depth = 0): SerializedError {
  const isObject = typeof thrown === 'object' && thrown !== null;
  const record = thrown as Record<string, unknown>;
  const fields: Record<string, unknown> = {};
  if (isObject) {
    for (const [key, value] of Object.entries(thrown)) {
      if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
      if (cloneError(value) === undefined) fields[key] = value;
    }
  }
  const serialized: SerializedError = {
    name: isObject && typeof record.name === 'string' ? record.name : 'Error',
    message:
      thrown instanceof Error
        ? thrown.message
        : isObject && typeof record.message === 'string'
          ? record.message
          : describe(thrown),
    fields,
  };
  if (thrown instanceof Error && thrown.stack !== undefined) serialized.stack = thrown.stack;
  if (isObject && record.cause !== undefined && depth < MAX_CAUSE_DEPTH) {
    serialized.cause = serializeError(record.cause, depth + 1);
  }
  return serialized;
}

function createLogger(logs: ThreadLogEntry[]): StepLogger {
  const at = (level: LogLevel) => (message: string, data?: JsonObject) => {
    const entry: ThreadLogEntry = { level, message: String(message) };
    if (data !== undefined) {
      // Snapshot now (as the inline logger's caller would see it) and never let one bad
      // value make the whole outcome unsendable.
      const reason = cloneError(data);
      entry.data =
        reason === undefined ? structuredClone(data) : { unserializable_log_data: reason };
    }
    logs.push(entry);
  };
  return Object.assign(at('info'), {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  });
}

// Aborting a task terminates its thread, so the signal a step sees here never fires.
const neverAborted = new AbortController().signal;

/** Run one step call: piscina's task handler. Never throws for what the step does. */
export default async function runThreadTask(task: ThreadTask): Promise<ThreadOutcome> {
  const logs: ThreadLogEntry[] = [];
  const context = {
    ...task.context,
    signal: neverAborted,
    secrets: envSecrets(),
    log: createLogger(logs),
  } as StepContext;
  let outcome: ThreadOutcome;
  try {
    const fn = await load(task.functionPath, task.stepsRoot);
    const value = await fn(task.state, context);
    outcome = { kind: 'returned', value, state: task.state, logs };
  } catch (thrown) {
    outcome = { kind: 'threw', error: serializeError(thrown), state: task.state, logs };
  }
  if (outcome.kind === 'returned') {
    const reason = cloneError(outcome.value);
    if (reason !== undefined) return { kind: 'uncloneable', what: 'result', reason, logs };
  }
  const reason = cloneError(outcome.state);
  if (reason !== undefined) return { kind: 'uncloneable', what: 'state', reason, logs };
  return outcome;
}
