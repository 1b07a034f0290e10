/**
 * The windows the trend series are served in: a closed set, each a fixed number of buckets
 * of a fixed width, so an answer is always 60 points whatever the window.
 */

/** The window names, shortest first. */
export const TREND_WINDOWS = ['10m', '60m'] as const;

/** A window name. */
export type TrendWindow = (typeof TREND_WINDOWS)[number];

/** How a window is cut into buckets. */
export interface WindowShape {
  /** Width of a bucket in seconds. */
  stepSeconds: number;
  /** Number of buckets, the last being the one that holds `now`. */
  buckets: number;
}

/** The shape of each window. */
export const WINDOW_SHAPES: Readonly<Record<TrendWindow, WindowShape>> = {
  '10m': { stepSeconds: 10, buckets: 60 },
  '60m': { stepSeconds: 60, buckets: 60 },
};

/** The buckets of `window` at `now`: their starts in epoch seconds, oldest first. */
export function bucketStarts(window: TrendWindow, now: Date): number[] {
  const { stepSeconds, buckets } = WINDOW_SHAPES[window];
  const current = Math.floor(now.getTime() / 1000 / stepSeconds) * stepSeconds;
  return Array.from({ length: buckets }, (_, i) => current - (buckets - 1 - i) * stepSeconds);
}
