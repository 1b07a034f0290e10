/**
 * The timers edge components schedule their background work with (polls, reconnects,
 * reports). They are a dependency, not the global `setTimeout`, so a test moves time by
 * hand instead of sleeping, and so `stop()` can be checked to leave nothing scheduled: a
 * component only ever holds the handles it got from here.
 */

/** Schedules callbacks; the subset of the global timer API the edge components use. */
export interface EdgeTimers {
  /** Run `callback` once after `ms` milliseconds; returns a handle for {@link clearTimeout}. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancel a callback that has not run yet (a handle already run or cleared is ignored). */
  clearTimeout(handle: unknown): void;
}

/** The process's real timers. */
export const systemTimers: EdgeTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
