/**
 * One background loop: a pass of work, run again and again with a wait between passes,
 * never two at once. Sweepers, dispatchers, pollers and pulses all need the same handful of
 * guarantees, and each hand-written copy got one of them slightly wrong: a `stop()` that
 * returned while a pass still wrote to a closed pool, an interval that fired a second pass
 * over a slow first one, a failing pass retried at full rate, a timer that kept a finished
 * process alive. Here they are written once:
 *
 * - at most one pass runs; `runNow()` during a pass joins it, `wake()` during a pass runs one
 *   more right after it (several wakes make one pass);
 * - the wait is measured from the end of a pass (a slow pass delays the next one rather than
 *   stacking them); `delayAfter` can shorten it (work left over: go again at once);
 * - consecutive failures back off exponentially with jitter when `backoff` is given;
 * - a pass started by the loop reports its error to `onError` and the loop goes on;
 * - `stop()` cancels the timer and resolves once the pass in progress has finished;
 * - the default timers are unref'd, so a loop never keeps a process alive on its own;
 * - a synchronous pass ends within the timer's callback, with the next pass scheduled.
 */
import { backoffDelay, type BackoffPolicy } from './backoffDelay.js';

/** The timers a loop schedules with; the subset of the global timer API it uses. */
export interface LoopTimers {
  /** Run `callback` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout: (callback: () => void, ms: number) => unknown;
  /** Cancel a callback that has not run yet. */
  clearTimeout: (handle: unknown) => void;
}

/** The process's timers, unref'd: a pending pass does not keep the process running. */
export const unrefTimers: LoopTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, Math.max(0, ms)).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** What a loop runs and when. */
export interface BackgroundLoopOptions<T> {
  /** One pass of the work. The loop never calls it while a pass of its own runs. */
  pass: () => Promise<T> | T;
  /** The wait after a pass (from its end). */
  intervalMs: number;
  /** The wait before the first pass after `start()` (default `intervalMs`); 0 runs it within `start()`. */
  firstDelayMs?: number;
  /** The wait after a pass that succeeded, from its result (default `intervalMs`). */
  delayAfter?: (result: T) => number;
  /**
   * The wait after a failed pass grows with consecutive failures, with jitter (see
   * {@link backoffDelay}), capped at `intervalMs`. Without it a failed pass waits `intervalMs`.
   */
  backoff?: BackoffPolicy;
  /** Source of the jitter, a number in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Where the error of a pass the loop started goes; the loop carries on. */
  onError: (error: unknown) => void;
  /** Timers to schedule with (default {@link unrefTimers}). */
  timers?: LoopTimers;
}

/** A background loop (see the module header). */
export interface BackgroundLoop<T> {
  /** Start scheduling passes (idempotent; a stopped loop starts again). */
  start(): void;
  /**
   * Run a pass now and resolve with its result; joins the pass in progress if there is one.
   * Its error goes to the caller. When started, the next pass is scheduled from its end.
   */
  runNow(): Promise<T>;
  /**
   * Run a pass as soon as possible without waiting for it: now, or right after the one in
   * progress. Works before `start()` too; does nothing after `stop()`.
   */
  wake(): void;
  /** Stop scheduling and resolve once no pass runs (idempotent). */
  stop(): Promise<void>;
  /** True between `start()` and `stop()`. */
  readonly started: boolean;
  /** Consecutive failed passes (0 after a pass that succeeded). */
  readonly failures: number;
}

const isPromiseLike = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

/** Create a loop (not started). */
export function createBackgroundLoop<T>(options: BackgroundLoopOptions<T>): BackgroundLoop<T> {
  const timers = options.timers ?? unrefTimers;
  const random = options.random ?? Math.random;
  if (!(options.intervalMs >= 0))
    throw new RangeError(`intervalMs must be ≥ 0, got ${options.intervalMs}`);
  let started = false;
  let stopped = false;
  let timer: { handle: unknown } | undefined;
  let current: Promise<T> | undefined;
  let again = false;
  let inSyncPass = false;
  let failures = 0;

  const clear = () => {
    if (timer) timers.clearTimeout(timer.handle);
    timer = undefined;
  };

  const schedule = (ms: number) => {
    clear();
    if (!started) return;
    const slot: { handle: unknown } = { handle: undefined };
    slot.handle = timers.setTimeout(() => {
      if (timer !== slot) return;
      timer = undefined;
      background();
    }, ms);
    timer = slot;
  };

  const failureDelay = () =>
    options.backoff
      ? Math.min(options.intervalMs, backoffDelay(options.backoff, failures, random))
      : options.intervalMs;

  const after = (delay: () => number) => {
    if (again) {
      again = false;
      background();
      return;
    }
    if (started) schedule(delay());
  };

  const succeeded = (result: T) => {
    current = undefined;
    failures = 0;
    after(() => options.delayAfter?.(result) ?? options.intervalMs);
  };
  const failed = () => {
    current = undefined;
    failures++;
    after(failureDelay);
  };

  const run = (): Promise<T> => {
    if (current) return current;
    clear();
    let value: T | PromiseLike<T>;
    inSyncPass = true;
    try {
      value = options.pass();
    } catch (error) {
      inSyncPass = false;
      failed();
      return Promise.resolve().then(() => {
        throw error;
      });
    }
    inSyncPass = false;
    if (!isPromiseLike(value)) {
      // a synchronous pass ends within the call: the next one is scheduled before it returns
      succeeded(value);
      return Promise.resolve(value);
    }
    const tracked = Promise.resolve(value).then(
      (result) => {
        succeeded(result);
        return result;
      },
      (error: unknown) => {
        failed();
        throw error;
      },
    );
    current = tracked;
    return tracked;
  };

  const background = () => {
    run().catch((error: unknown) => {
      try {
        options.onError(error);
      } catch {
        // a reporter's failure is not the loop's
      }
    });
  };

  return {
    start() {
      if (started) return;
      started = true;
      stopped = false;
      if (current) return; // the pass in progress schedules the next when it ends
      const first = options.firstDelayMs ?? options.intervalMs;
      if (first === 0) background();
      else schedule(first);
    },
    runNow: run,
    wake() {
      if (stopped) return;
      if (current || inSyncPass) again = true;
      else background();
    },
    async stop() {
      started = false;
      stopped = true;
      again = false;
      clear();
      while (current) await current.catch(() => undefined);
    },
    get started() {
      return started;
    },
    get failures() {
      return failures;
    },
  };
}
