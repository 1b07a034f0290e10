/**
 * The trends of one gateway: the fleet gauges sampled on a background loop (runtime/loop)
 * into a bounded ring (gaugeRing.ts), and the counted series aggregated by the database when
 * asked (countBuckets.ts), cached briefly so that many open dashboards cost one query per
 * window. Samples run one at a time, and `close()` waits for the one in progress, so none
 * reads a database that was closed after it.
 *
 * Several gateways: each keeps its own ring and cache, but all read the same database, so
 * they answer the same counts and the same gauges; they differ only in gauge history from
 * before a gateway started (null there) and by up to one sampling interval.
 */
import { createBackgroundLoop, type CloudStore } from '../../runtime/index.js';
import { countBuckets, emptyCounts, type BucketCounts } from './countBuckets.js';
import { createGaugeRing, type GaugeSample } from './gaugeRing.js';
import { readGauges } from './readGauges.js';
import { bucketStarts, WINDOW_SHAPES, type TrendWindow } from './windows.js';

/** The series names, in the order a chart shows them. */
export const SERIES_NAMES = [
  'payments_approved_online',
  'payments_approved_offline',
  'saf_backlog',
  'devices_online',
  'commands_succeeded',
  'commands_failed',
  'workflows_ended',
  'workflow_latency_p50_ms',
  'workflow_latency_p99_ms',
] as const;

/** A series name. */
export type SeriesName = (typeof SERIES_NAMES)[number];

/** The series of one window, one value per bucket (null: no data for that bucket). */
export interface TrendSeries {
  window: TrendWindow;
  stepSeconds: number;
  /** Bucket starts, epoch seconds, oldest first; the last bucket holds `at`. */
  timestamps: number[];
  series: Record<SeriesName, (number | null)[]>;
  /** When the series were read. */
  at: Date;
}

/** Options of {@link createTrends}. */
export interface TrendOptions {
  /** Interval of the gauge samples (default 10 s). */
  sampleMs?: number;
  /** Gauge samples kept (default 360: an hour at 10 s). */
  capacity?: number;
  /** How long counted series are reused (default 5 s). */
  cacheMs?: number;
  /** Told when a sample or an aggregation fails (the series then show a gap). */
  onError?: (error: unknown) => void;
}

/** The trends of one gateway. */
export interface Trends {
  /** Take a first sample now, then one an interval after each. */
  start(): Promise<void>;
  /** Take a gauge sample now (what the timer does); joins a sample in progress. */
  sample(): Promise<void>;
  /** The series of `window` at this moment. */
  read(window: TrendWindow): Promise<TrendSeries>;
  /** Stop sampling; resolves once no sample runs. */
  close(): Promise<void>;
}

const COUNTED: readonly (readonly [SeriesName, keyof BucketCounts])[] = [
  ['payments_approved_online', 'paymentsApprovedOnline'],
  ['payments_approved_offline', 'paymentsApprovedOffline'],
  ['commands_succeeded', 'commandsSucceeded'],
  ['commands_failed', 'commandsFailed'],
  ['workflows_ended', 'workflowsEnded'],
  ['workflow_latency_p50_ms', 'latencyP50Ms'],
  ['workflow_latency_p99_ms', 'latencyP99Ms'],
];

/** Trends over `store`, timed by `now`. */
export function createTrends(
  store: CloudStore,
  now: () => Date,
  options: TrendOptions = {},
): Trends {
  const sampleMs = options.sampleMs ?? 10_000;
  const cacheMs = options.cacheMs ?? 5_000;
  const onError = options.onError ?? (() => {});
  const ring = createGaugeRing(options.capacity ?? 360);
  const cache = new Map<TrendWindow, { at: number; value: Promise<TrendSeries> }>();
  let closed = false;

  const samples = createBackgroundLoop({
    intervalMs: sampleMs,
    pass: async () => {
      ring.add(await readGauges(store, now()));
    },
    onError,
  });
  // a failed sample leaves a gap in the series; the caller is not failed for it
  const sample = () => samples.runNow().catch(onError);

  const compute = async (window: TrendWindow): Promise<TrendSeries> => {
    const at = now();
    const { stepSeconds } = WINDOW_SHAPES[window];
    const timestamps = bucketStarts(window, at);
    const first = timestamps[0]!;
    const end = timestamps[timestamps.length - 1]! + stepSeconds;
    const [counts, live] = await Promise.all([
      countBuckets(store, new Date(first * 1000), new Date(end * 1000), stepSeconds),
      readGauges(store, at),
    ]);
    const series = Object.fromEntries(SERIES_NAMES.map((n) => [n, [] as (number | null)[]]));
    // the gauges: the last sample in each bucket; the current bucket shows the live reading
    const lastIn = new Map<number, GaugeSample>();
    for (const s of ring.samples())
      lastIn.set(Math.floor(s.at / 1000 / stepSeconds) * stepSeconds, s);
    lastIn.set(timestamps[timestamps.length - 1]!, live);
    for (const t of timestamps) {
      const c = counts.get(t) ?? emptyCounts();
      for (const [name, key] of COUNTED) series[name]!.push(c[key]);
      const g = lastIn.get(t);
      series.saf_backlog!.push(g ? g.safBacklog : null);
      series.devices_online!.push(g ? g.devicesOnline : null);
    }
    return {
      window,
      stepSeconds,
      timestamps,
      series: series as Record<SeriesName, (number | null)[]>,
      at,
    };
  };

  return {
    async start() {
      if (samples.started || closed) return;
      samples.start();
      await sample();
    },
    sample,
    read(window) {
      const cached = cache.get(window);
      const t = now().getTime();
      if (cached && t - cached.at < cacheMs) return cached.value;
      const value = compute(window);
      cache.set(window, { at: t, value });
      // a failed read is not reused
      value.catch((error: unknown) => {
        if (cache.get(window)?.value === value) cache.delete(window);
        onError(error);
      });
      return value;
    },
    close() {
      closed = true;
      return samples.stop();
    },
  };
}
