/**
 * Reports the device's metrics to the cloud on an interval and on demand (the DIAGNOSTIC
 * command). A report that cannot be sent is not queued: the next one carries current
 * figures, which is what an operator wants, and an offline terminal does not pile up stale
 * reports in its database.
 */
import {
  createBackgroundLoop,
  SaffronError,
  toError,
  type EdgeStore,
} from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { systemTimers, type EdgeTimers } from '../timers/timers.js';
import {
  collectMetrics,
  type CollectMetricsDeps,
  type EdgeMetricsReport,
} from './collectMetrics.js';

/** How a report ended. */
export type MetricsReportOutcome =
  | { sent: true; report: EdgeMetricsReport; at: Date }
  | {
      sent: false;
      report: EdgeMetricsReport | null;
      at: Date;
      error: { code: string; message: string };
    };

/** Events of the reporter. */
export type MetricsEvent =
  | { type: 'edge.metrics.reported'; report: EdgeMetricsReport }
  | { type: 'edge.metrics.failed'; code: string; message: string };

/** What the reporter needs. */
export interface MetricsReporterDeps extends Omit<CollectMetricsDeps, 'store'> {
  store: EdgeStore;
  cloud: CloudClient;
  /** Period of the report (5 min). */
  intervalMs?: number;
  /** Give up on one request after this long (30 s). */
  requestTimeoutMs?: number;
  onEvent?: (event: MetricsEvent) => void;
  now?: () => Date;
  timers?: EdgeTimers;
}

/** The metrics reporter of one device. */
export interface MetricsReporter {
  /** Report now, then every interval. */
  start(): void;
  /** Stop reporting; aborts a report in flight and waits for it. */
  stop(): Promise<void>;
  /** Collect without sending. */
  collect(): Promise<EdgeMetricsReport>;
  /** Collect and send now; never throws (the outcome says what failed). */
  reportNow(): Promise<MetricsReportOutcome>;
  /** The last outcome, if any. */
  last(): MetricsReportOutcome | null;
}

/** Create the reporter (not started). */
export function createMetricsReporter(deps: MetricsReporterDeps): MetricsReporter {
  const now = deps.now ?? (() => new Date());
  const timers = deps.timers ?? systemTimers;
  const intervalMs = deps.intervalMs ?? 300_000;
  const requestTimeoutMs = deps.requestTimeoutMs ?? 30_000;
  const emit = (event: MetricsEvent) => {
    try {
      deps.onEvent?.(event);
    } catch {
      // a listener's failure is not the reporter's
    }
  };
  let lastOutcome: MetricsReportOutcome | null = null;
  const controllers = new Set<AbortController>();

  const collect = () => collectMetrics(deps);

  const send = async (report: EdgeMetricsReport) => {
    const controller = new AbortController();
    controllers.add(controller);
    const timeout = timers.setTimeout(() => controller.abort(), requestTimeoutMs);
    try {
      const response = await deps.cloud.request({
        method: 'POST',
        path: `/api/v1/devices/${encodeURIComponent(deps.cloud.deviceId)}/metrics`,
        json: report,
        signal: controller.signal,
      });
      const text = await response.text();
      if (!response.ok)
        throw new SaffronError(
          'METRICS_REPORT_REFUSED',
          `the cloud answered ${response.status}: ${text.slice(0, 500)}`,
          { retryable: response.status >= 500 || response.status === 429 },
        );
    } catch (error) {
      if (error instanceof SaffronError) throw error;
      throw new SaffronError('METRICS_REPORT_FAILED', 'could not reach the cloud', {
        cause: error,
        retryable: true,
      });
    } finally {
      timers.clearTimeout(timeout);
      controllers.delete(controller);
    }
  };

  const reportNow = async (): Promise<MetricsReportOutcome> => {
    let report: EdgeMetricsReport | null = null;
    try {
      report = await collect();
      await send(report);
      lastOutcome = { sent: true, report, at: now() };
      emit({ type: 'edge.metrics.reported', report });
    } catch (error) {
      const e = toError(error);
      const info = { code: e instanceof SaffronError ? e.code : 'INTERNAL', message: e.message };
      lastOutcome = { sent: false, report, at: now(), error: info };
      emit({ type: 'edge.metrics.failed', ...info });
    }
    return lastOutcome;
  };

  const reports = createBackgroundLoop({
    intervalMs,
    firstDelayMs: 0,
    timers,
    pass: reportNow,
    onError: () => undefined, // reportNow never throws
  });

  return {
    start: () => reports.start(),
    async stop() {
      const stopped = reports.stop();
      for (const controller of controllers) controller.abort();
      await stopped;
    },
    collect,
    reportNow,
    last: () => lastOutcome,
  };
}
