/**
 * Trends of the fleet and the engine over the last hour, for the dashboard's charts: see
 * trends.ts for what is kept where, countBuckets.ts and readGauges.ts for what each series
 * counts.
 */
export { createTrends, SERIES_NAMES } from './trends.js';
export type { SeriesName, TrendOptions, Trends, TrendSeries } from './trends.js';
export { TREND_WINDOWS, WINDOW_SHAPES } from './windows.js';
export type { TrendWindow, WindowShape } from './windows.js';
export { LOOKBACK_MS } from './countBuckets.js';
