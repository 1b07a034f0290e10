/**
 * Trends for the dashboard's charts: `GET /api/v1/metrics/series?window=10m|60m` (any
 * operator role). Sixty buckets of 10 s or 1 min: payments approved online and offline, SAF
 * backlog, devices online, commands that succeeded and failed, workflows that ended and
 * their run time p50 / p99. What each series counts, and where it is kept, is in
 * gateway/trends/; the gauge sampler starts and stops with this route module.
 */
import { z } from 'zod';
import type { GatewayContext } from '../context.js';
import { route } from '../route.js';
import type { RouteModule } from '../server.js';
import {
  createTrends,
  SERIES_NAMES,
  TREND_WINDOWS,
  type TrendOptions,
  type Trends,
} from './index.js';

const READ = ['admin', 'operator', 'viewer'] as const;

const seriesQuery = z.strictObject({
  window: z
    .enum(TREND_WINDOWS)
    .default('60m')
    .meta({ description: '10m: sixty 10-second buckets; 60m: sixty 1-minute buckets' }),
});

const values = z.array(z.number().nullable());

const seriesResponse = z.object({
  window: z.enum(TREND_WINDOWS),
  step_seconds: z.number().int().meta({ description: 'width of a bucket' }),
  read_at: z.string().meta({ description: 'when the series were read (RFC 3339)' }),
  timestamps: z
    .array(z.number().int())
    .meta({ description: 'bucket starts, epoch seconds, oldest first; the last is current' }),
  series: z.object(Object.fromEntries(SERIES_NAMES.map((name) => [name, values]))).meta({
    description:
      'one value per bucket; null where there is no data (a gauge before this gateway sampled it, a latency without ended workflows)',
  }),
});

/** Options of {@link trendRoutes}. */
export interface TrendRouteOptions extends TrendOptions {
  /** Called with the trends once they run (embedders and tests read or observe them). */
  onTrends?: (trends: Trends) => void;
}

/** The trend series route, with its gauge sampler tuned by `options`. */
export function trendRoutes(options: TrendRouteOptions = {}): RouteModule {
  return async (ctx: GatewayContext) => {
    const trends = createTrends(ctx.store, () => ctx.now(), {
      onError: (error) => ctx.app.log.warn({ err: error }, 'reading trend series failed'),
      ...options,
    });
    await trends.start();
    ctx.onClose(() => trends.close());
    options.onTrends?.(trends);
    route(
      ctx,
      {
        method: 'GET',
        url: '/api/v1/metrics/series',
        summary:
          'trends of the last 10 or 60 minutes: payments, SAF backlog, devices, commands, workflows',
        tags: ['metrics'],
        access: { roles: READ },
        query: seriesQuery,
        response: seriesResponse,
      },
      async ({ query }) => {
        const read = await trends.read(query.window);
        return {
          window: read.window,
          step_seconds: read.stepSeconds,
          read_at: read.at.toISOString(),
          timestamps: read.timestamps,
          series: read.series,
        };
      },
    );
  };
}
