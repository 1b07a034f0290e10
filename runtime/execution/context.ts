/**
 * The `context` a step function receives (docs/architecture.md#definitions-and-step-functions). Logging through `context.log` is
 * buffered and written to workflow_execution_logs in the step's own commit, so a step's log
 * lines and its result become durable together.
 */
import type { JsonObject } from '../model/json.js';
import type { LogLevel } from '../model/statuses.js';
import type { SecretProvider } from '../template/index.js';
import type { StepEffects } from './outcome.js';

/** `context.log(message, data?)` logs at info; `.debug/.info/.warn/.error` pick the level. */
export interface StepLogger {
  (message: string, data?: JsonObject): void;
  debug(message: string, data?: JsonObject): void;
  info(message: string, data?: JsonObject): void;
  warn(message: string, data?: JsonObject): void;
  error(message: string, data?: JsonObject): void;
}

/** What a step function gets as its second argument. */
export interface StepContext {
  workflowId: string;
  workflowType: string;
  stepName: string;
  /** 1 for the first execution of this visit to the step, more after a repeat or retry. */
  attempt: number;
  /** Stable across repeats of the same step execution: use it to deduplicate side effects. */
  idempotencyKey: string;
  /** User input given with `next` or `resume`, else undefined. */
  input?: JsonObject;
  loopItem?: unknown;
  loopIndex?: number;
  loop_item?: unknown;
  loop_index?: number;
  /**
   * Aborted when the engine gives up on the step: an ASYNC or PARALLEL task that its worker no
   * longer holds — its lease ran out and another worker took it over, or its step ended
   * without it (a PARALLEL timeout, the workflow deleted) — is aborted at the worker's next
   * heartbeat (cloud stores), with a `TASK_LOST` StepError, and whatever it returns is not
   * recorded. Steps the engine runs itself are never aborted: `close()` waits for them.
   */
  signal: AbortSignal;
  secrets: SecretProvider;
  log: StepLogger;
  /** Loop variables named by `item_var_name`, and anything else the engine exposes. */
  [key: string]: unknown;
}

/** Build a logger that appends to `effects.logs` for `stepName`. */
export function createStepLogger(effects: StepEffects, stepName: string): StepLogger {
  const at = (level: LogLevel) => (message: string, data?: JsonObject) => {
    effects.logs.push({ stepName, level, message: String(message), ...(data ? { data } : {}) });
  };
  return Object.assign(at('info'), {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  });
}

/**
 * A step's abort, whose AbortController is made only when its signal is first read: most
 * steps never look at it, and a controller per step or task is a cost every one of them
 * would pay. An abort before that read is kept, and the signal is made already aborted.
 */
export interface StepAbort {
  readonly signal: AbortSignal;
  /** Abort the signal with `reason` (only the first call counts). */
  abort(reason: Error): void;
}

/** {@link StepAbort} as a class: its accessor lives on the prototype, not in each instance. */
class LazyAbort implements StepAbort {
  #controller: AbortController | undefined;
  #early: Error | undefined;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#early !== undefined) this.#controller.abort(this.#early);
    }
    return this.#controller.signal;
  }

  abort(reason: Error): void {
    if (this.#controller) this.#controller.abort(reason);
    else this.#early ??= reason;
  }
}

/** A new {@link StepAbort}. */
export function stepAbort(): StepAbort {
  return new LazyAbort();
}

/** What a context's `signal` and `log` accessors read, kept on the context under a symbol. */
interface LazyParts {
  abort: StepAbort;
  /** Where the logger writes, for contexts with a `log`. */
  effects?: StepEffects;
  stepName?: string;
  log?: StepLogger;
}

const PARTS = Symbol('stepContextParts');
type WithParts = { [PARTS]: LazyParts };

// One getter function for every context: each context's own closure would give each its own
// hidden class (about 1 KB a step, where these take a few dozen bytes).
function readSignal(this: WithParts): AbortSignal {
  return this[PARTS].abort.signal;
}

function readLog(this: WithParts): StepLogger {
  const parts = this[PARTS];
  parts.log ??= createStepLogger(parts.effects!, parts.stepName!);
  return parts.log;
}

function attachParts<T extends object>(context: T, parts: LazyParts): void {
  Object.defineProperty(context, PARTS, { value: parts });
  Object.defineProperty(context, 'signal', { get: readSignal, enumerable: true });
}

/**
 * `context` with its `signal`, the signal of `abort` (a new one by default): made on first
 * read, so each context that is never asked for it costs no controller, and listeners a step
 * leaves on it go with the context.
 */
export function withSignal<T extends object>(
  context: T,
  abort: StepAbort = stepAbort(),
): T & { readonly signal: AbortSignal } {
  attachParts(context, { abort });
  return context as T & { readonly signal: AbortSignal };
}

/**
 * `context` with its `signal` (as {@link withSignal}) and its `log`, a logger appending to
 * `effects.logs` for `stepName` that is made when first read: most steps never log.
 */
export function withSignalAndLog<T extends object>(
  context: T,
  effects: StepEffects,
  stepName: string,
  abort: StepAbort = stepAbort(),
): T & { readonly signal: AbortSignal; readonly log: StepLogger } {
  attachParts(context, { abort, effects, stepName });
  Object.defineProperty(context, 'log', { get: readLog, enumerable: true });
  return context as T & { readonly signal: AbortSignal; readonly log: StepLogger };
}

/** The plain-data view of a context that expressions and templates see as `context`. */
export function contextScope(context: StepContext): JsonObject {
  const scope: JsonObject = {};
  for (const key of Object.keys(context)) {
    if (key === 'signal' || key === 'secrets' || key === 'log') continue;
    scope[key] = context[key];
  }
  return scope;
}
