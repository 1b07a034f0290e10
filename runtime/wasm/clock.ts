/**
 * Milliseconds since the epoch at sub-millisecond resolution, the same on every thread of the
 * process: each thread's `performance.now()` counts from its own `timeOrigin`.
 */
export const epochMs = (): number => performance.timeOrigin + performance.now();
