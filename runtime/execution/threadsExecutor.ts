/**
 * The `threads` execution provider (docs/architecture.md#execution-providers): step functions run in a piscina pool of
 * worker threads, so a CPU-bound step cannot stall the engine's event loop — timers,
 * heartbeats and other workflows keep running while it computes.
 *
 * A thread only receives structured-cloneable data: the working copy of the state and the
 * context without `signal`, `secrets` and `log`. The thread rebuilds those (see
 * `threadsWorker.ts`) and answers with a plain outcome this module turns back into what an
 * inline call would have produced: the returned value, the working copy's in-place changes
 * copied back into the caller's object, the `context.log` lines replayed in order, and thrown
 * errors rebuilt with their `name` and fields so directives read the same as inline ones.
 *
 * Secrets are never shipped to threads. A step running here reads `context.secrets` from its
 * own environment — `SAFFRON_SECRET_<NAME>`, as `envSecrets()` does — and the threads
 * share the engine's `process.env`, so the runtime's `secrets` option (e.g. `mapSecrets`)
 * does not reach them.
 *
 * From the TypeScript sources, a thread cannot load the `.ts` worker on its own (tsx's hooks
 * live on the thread that registered them), so piscina starts `threadsWorkerBootstrap.mjs`,
 * which loads it through tsx; the compiled build points piscina at `threadsWorker.js`.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHARE_ENV } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { SaffronError } from '../errors.js';
import type { JsonObject } from '../model/json.js';
import type { StepContext, StepLogger } from './context.js';
import type { StepExecutor } from './executor.js';
import type { SerializedError, ThreadOutcome, ThreadTask } from './threadsWorker.js';

/** Options of {@link threadsExecutor}. */
export interface ThreadsExecutorOptions {
  /** Root of step modules, resolved in each thread as by the inline executor. */
  stepsRoot: string;
  /** Threads kept alive when idle (default: piscina's, half the cores, at most `maxThreads`). */
  minThreads?: number;
  /** Most threads, i.e. most steps computing at once (default `os.availableParallelism()`). */
  maxThreads?: number;
  /** How long a thread above `minThreads` may idle before it stops (default 0). */
  idleTimeoutMs?: number;
  /** Most calls waiting for a thread; more are rejected (default unbounded). */
  maxQueue?: number;
  /** Memory cap of each thread; a thread over it dies and its step fails. */
  resourceLimits?: { maxOldGenerationSizeMb?: number };
}

/** Codes of {@link ThreadsExecutorError}. */
export type ThreadsExecutorErrorCode =
  'EXECUTOR_CLOSED' | 'THREAD_RESULT_NOT_CLONEABLE' | 'THREAD_FAILED';

/** The pool could not run a step, or the step's outcome could not be sent back. */
export class ThreadsExecutorError extends SaffronError {
  override readonly name = 'ThreadsExecutorError';

  constructor(
    code: ThreadsExecutorErrorCode,
    functionPath: string,
    message: string,
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(code, message, { ...options, details: { function: functionPath } });
  }
}

/** The piscina entry: the compiled worker when there is one, else the tsx bootstrap. */
function workerFilename(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const compiled = path.join(here, 'threadsWorker.js');
  return existsSync(compiled) ? compiled : path.join(here, 'threadsWorkerBootstrap.mjs');
}

/** The context minus what cannot (`signal`, `log`, functions) or must not (`secrets`) travel. */
function plainContext(context: StepContext): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (key === 'signal' || key === 'secrets' || key === 'log') continue;
    if (typeof value === 'function' || typeof value === 'symbol') continue;
    plain[key] = value;
  }
  return plain;
}

function rebuildError(serialized: SerializedError): Error {
  const error = new Error(
    serialized.message,
    serialized.cause ? { cause: rebuildError(serialized.cause) } : undefined,
  );
  Object.assign(error, serialized.fields);
  error.name = serialized.name;
  if (serialized.stack !== undefined) error.stack = serialized.stack;
  return error;
}

/** Make `target` hold exactly `source`'s keys, keeping the caller's object identity. */
function replaceContents(target: JsonObject, source: JsonObject): void {
  for (const key of Object.keys(target)) {
    if (!Object.hasOwn(source, key)) delete target[key];
  }
  Object.assign(target, source);
}

function replayLogs(outcome: ThreadOutcome, log: StepLogger): void {
  for (const entry of outcome.logs) log[entry.level](entry.message, entry.data);
}

/**
 * Runs step functions in worker threads. Each thread imports a step module once; aborting the
 * context's `signal` terminates the thread running the step and rejects with the abort reason.
 */
export function threadsExecutor(options: ThreadsExecutorOptions): StepExecutor {
  const stepsRoot = path.resolve(options.stepsRoot);
  const pool = new Piscina<ThreadTask, ThreadOutcome>({
    filename: workerFilename(),
    maxThreads: options.maxThreads ?? availableParallelism(),
    ...(options.minThreads !== undefined ? { minThreads: options.minThreads } : {}),
    ...(options.idleTimeoutMs !== undefined ? { idleTimeout: options.idleTimeoutMs } : {}),
    ...(options.maxQueue !== undefined ? { maxQueue: options.maxQueue } : {}),
    ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}),
    // Live view of the engine's environment, so rotated SAFFRON_SECRET_* values are seen.
    env: SHARE_ENV,
  });
  let closing: Promise<void> | undefined;
  const closedError = (functionPath: string) =>
    new ThreadsExecutorError(
      'EXECUTOR_CLOSED',
      functionPath,
      `cannot run ${functionPath}: the threads executor is closed`,
    );

  return {
    async call(functionPath, state, context) {
      if (closing) throw closedError(functionPath);
      const { signal } = context;
      signal.throwIfAborted();
      const task: ThreadTask = { functionPath, stepsRoot, state, context: plainContext(context) };
      let outcome: ThreadOutcome;
      try {
        outcome = await pool.run(task, { signal });
      } catch (cause) {
        if (signal.aborted) throw signal.reason;
        if (closing) throw closedError(functionPath);
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw new ThreadsExecutorError(
          'THREAD_FAILED',
          functionPath,
          `${functionPath} could not run in a worker thread: ${reason}`,
          { cause },
        );
      }
      replayLogs(outcome, context.log);
      switch (outcome.kind) {
        case 'returned':
          replaceContents(state, outcome.state);
          return outcome.value;
        case 'threw':
          replaceContents(state, outcome.state);
          throw rebuildError(outcome.error);
        case 'uncloneable':
          throw new ThreadsExecutorError(
            'THREAD_RESULT_NOT_CLONEABLE',
            functionPath,
            outcome.what === 'result'
              ? `${functionPath} returned a value that cannot leave its worker thread (${outcome.reason}); return plain data`
              : `${functionPath} left a value in state that cannot leave its worker thread (${outcome.reason}); keep state plain data`,
          );
        default: {
          const never: never = outcome;
          throw new Error(`unknown thread outcome ${JSON.stringify(never)}`);
        }
      }
    },
    close() {
      closing ??= pool.destroy();
      return closing;
    },
  };
}
