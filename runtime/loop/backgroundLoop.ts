/**
 * One background loop: a pass of work, run again and again with a wait between passes,
 * never two at once. Sweepers, dispatchers, pollers and pulses all need the same handful of
 * guarantees, and each hand-written copy got one of them slightly wrong: a `stop()` that
 * returned while a pass still wrote to a closed pool, an interval that fired a second pass
 * over a slow first one, a failing pass retried at full rate, a timer that kept a finished
 * process alive. Here they are written once:
 *
 * - at most one pass runs; `runNow()` during a pass joins it, `wake()` and `runNext()` during
 *   a pass run one more right after it (several calls make one pass);
 * - the wait is measured from the end of a pass (a slow pass delays the next one rather than
 *   stacking them); `delayAfter` can shorten it (work left over: go again at once), the
 *   interval may come from configuration that changes while the loop runs, and `runIn()`
 *   moves the next pass (a jittered start after an outage);
 * - consecutive failures back off exponentially with jitter when `backoff` is given, or as
 *   `delayAfterFailure` says (a server's Retry-After); a pass may also fail by its result,
 *   when it reports its failures instead of throwing;
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
  /**
   * The wait after a pass (from its end); a function is asked at each pass (a period read from
   * configuration). `Infinity`: no timer, passes run only when asked for.
   */
  intervalMs: number | (() => number);
  /**
   * The wait before the first pass after `start()` (default `intervalMs`); 0 runs it within
   * `start()`, `Infinity` leaves it to `runIn()`, `wake()` and the like.
   */
  firstDelayMs?: number;
  /** The wait after a pass that succeeded, from its result (default `intervalMs`). */
  delayAfter?: (result: T) => number;
  /**
   * Whether a pass that resolved with `result` failed: it then backs off like a pass that
   * threw, and its result still goes to the caller (a pass that reports its failures).
   */
  failed?: (result: T) => boolean;
  /**
   * The wait after a failed pass grows with consecutive failures, with jitter (see
   * {@link backoffDelay}), capped at `intervalMs`. Without it a failed pass waits `intervalMs`.
   */
  backoff?: BackoffPolicy;
  /**
   * The wait after the `failures`-th consecutive failed pass, in place of `backoff` (a policy
   * of one's own: a longer back-off than the interval, a server's Retry-After).
   */
  delayAfterFailure?: (failures: number) => number;
  /** Source of the jitter, a number in [0, 1) (default `Math.random`). */
  random?: () => number;
  /** Where the error of a pass the loop started goes; the loop carries on. */
  onError: (error: unknown) => void;
  /** Told the wait each time the loop sets its timer (for a status or a log). */
  onSchedule?: (delayMs: number) => void;
  /**
   * Told the result of each pass that resolved, once the loop has planned what follows (a
   * listener told of the pass then sees when the next one is due).
   */
  onResult?: (result: T) => void;
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
   * Run a pass that starts after this call and resolve with its result: now, or right after
   * the pass in progress (calls during a pass share that one). For a caller that needs what
   * is there now, which the pass in progress may have missed. Its error goes to the caller.
   */
  runNext(): Promise<T>;
  /**
   * Run a pass as soon as possible without waiting for it: now, or right after the one in
   * progress. Works before `start()` too; does nothing after `stop()`.
   */
  wake(): void;
  /**
   * Run the next pass `ms` from now instead of when it was due; during a pass, `ms` after
   * it ends. Does nothing unless started.
   */
  runIn(ms: number): void;
  /** Forget the failures so far: the next back-off starts again from its base. */
  resetFailures(): void;
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
  const configured = options.intervalMs;
  if (typeof configured === 'number' && !(configured >= 0))
    throw new RangeError(`intervalMs must be ≥ 0, got ${configured}`);
  const interval = () => (typeof configured === 'number' ? configured : configured());
  let started = false;
  let stopped = false;
  let timer: { handle: unknown } | undefined;
  let current: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  let again = false;
  /** The wait after the pass in progress, set by `runIn()` during it. */
  let planned: number | undefined;
  let inSyncPass = false;
  let failures = 0;

  const clear = () => {
    if (timer) timers.clearTimeout(timer.handle);
    timer = undefined;
  };

  const schedule = (ms: number) => {
    clear();
    if (!started || !(ms < Infinity)) return;
    const slot: { handle: unknown } = { handle: undefined };
    slot.handle = timers.setTimeout(() => {
      if (timer !== slot) return;
      timer = undefined;
      background();
    }, ms);
    timer = slot;
    try {
      options.onSchedule?.(ms);
    } catch {
      // a listener's failure is not the loop's
    }
  };

  const failureDelay = () => {
    if (options.delayAfterFailure) return options.delayAfterFailure(failures);
    if (options.backoff)
      return Math.min(interval(), backoffDelay(options.backoff, failures, random));
    return interval();
  };

  const after = (delay: () => number) => {
    if (again) {
      again = false;
      background();
      return;
    }
    const wait = planned;
    planned = undefined;
    if (started) schedule(wait ?? delay());
  };

  const failed = () => {
    current = undefined;
    failures++;
    after(failureDelay);
  };
  const succeeded = (result: T) => {
    if (options.failed?.(result)) failed();
    else {
      current = undefined;
      failures = 0;
      after(() => options.delayAfter?.(result) ?? interval());
    }
    try {
      options.onResult?.(result);
    } catch {
      // a listener's failure is not the loop's
    }
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

  const runNext = (): Promise<T> => {
    // during a synchronous pass: once it has returned
    if (inSyncPass) return Promise.resolve().then(runNext);
    if (!current) return run();
    next ??= current
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        next = undefined;
        return run();
      });
    return next;
  };

  return {
    start() {
      if (started) return;
      started = true;
      stopped = false;
      if (current) return; // the pass in progress schedules the next when it ends
      const first = options.firstDelayMs ?? interval();
      if (first === 0) background();
      else schedule(first);
    },
    runNow: run,
    runNext,
    wake() {
      if (stopped) return;
      if (current || inSyncPass) again = true;
      else background();
    },
    runIn(ms) {
      if (!started) return;
      if (current || next || inSyncPass) planned = ms;
      else schedule(ms);
    },
    resetFailures() {
      failures = 0;
    },
    async stop() {
      started = false;
      stopped = true;
      again = false;
      planned = undefined;
      clear();
      for (let busy = current ?? next; busy; busy = current ?? next)
        await busy.catch(() => undefined);
    },
    get started() {
      return started;
    },
    get failures() {
      return failures;
    },
  };
}
