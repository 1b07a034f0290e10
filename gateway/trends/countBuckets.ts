/**
 * The counted series of a window, aggregated by the database from the rows that record what
 * happened, bucket by bucket:
 *
 * - workflows that ended (reached COMPLETED, FAILED, FAILED_ROLLED_BACK or CANCELLED) by
 *   the time they ended (`updated_at` of the terminal row), with the p50 and p99 of their
 *   run time (`updated_at - created_at`). Workflows the cloud ran and workflows devices ran
 *   and summarised (`POST /api/v1/devices/{id}/workflow-summaries`, timed by the device)
 *   alike.
 * - payments approved online and offline: those of the ended workflows that COMPLETED with
 *   `state.decision.status = 'APPROVED'` and `state.decision.mode` `ONLINE` or `OFFLINE` —
 *   the decision the POS payment workflow records (examples/pos), by the time it ended.
 * - commands that succeeded and failed: `COMMAND_EXECUTED` and `COMMAND_FAILED` rows of the
 *   command audit log (a device's ack, or deliveries run out), by the time they were written.
 *
 * Reading the rows rather than counting events in memory means a late upload (a terminal
 * back from an outage) lands in the minute its payments happened, and every gateway answers
 * the same numbers. Only workflows created at most {@link LOOKBACK_MS} before the window
 * are read (the `created_at` index bounds the scan): a workflow that ran longer is not
 * counted.
 */
import { sql } from 'kysely';
import type { CloudStore } from '../../runtime/index.js';

/** How long before the window a counted workflow may have started. */
export const LOOKBACK_MS = 60 * 60 * 1000;

/** The counted series of one bucket. */
export interface BucketCounts {
  paymentsApprovedOnline: number;
  paymentsApprovedOffline: number;
  workflowsEnded: number;
  /** Median run time of the workflows that ended (ms); null when none did. */
  latencyP50Ms: number | null;
  /** 99th percentile run time (ms); null when none ended. */
  latencyP99Ms: number | null;
  commandsSucceeded: number;
  commandsFailed: number;
}

/** Buckets with nothing in them. */
export const emptyCounts = (): BucketCounts => ({
  paymentsApprovedOnline: 0,
  paymentsApprovedOffline: 0,
  workflowsEnded: 0,
  latencyP50Ms: null,
  latencyP99Ms: null,
  commandsSucceeded: 0,
  commandsFailed: 0,
});

type Num = string | number | null;

/**
 * Counts per bucket start (epoch seconds) for the buckets of `stepSeconds` from `from`
 * (inclusive, a bucket start) to `to` (exclusive). Buckets with nothing are absent.
 */
export async function countBuckets(
  store: CloudStore,
  from: Date,
  to: Date,
  stepSeconds: number,
): Promise<Map<number, BucketCounts>> {
  const step = sql.lit(stepSeconds);
  const time = (value: Date) => sql`CAST(${store.codec.time(value)} AS timestamptz)`;
  const since = time(new Date(from.getTime() - LOOKBACK_MS));
  const start = time(from);
  const end = time(to);
  const workflows = await sql<{
    bucket: Num;
    online: Num;
    offline: Num;
    ended: Num;
    p50: Num;
    p99: Num;
  }>`
    SELECT floor(extract(epoch FROM updated_at) / ${step}) * ${step} AS bucket,
           count(*) FILTER (WHERE status = 'COMPLETED'
             AND state -> 'decision' ->> 'status' = 'APPROVED'
             AND state -> 'decision' ->> 'mode' = 'ONLINE') AS online,
           count(*) FILTER (WHERE status = 'COMPLETED'
             AND state -> 'decision' ->> 'status' = 'APPROVED'
             AND state -> 'decision' ->> 'mode' = 'OFFLINE') AS offline,
           count(*) AS ended,
           percentile_cont(0.5) WITHIN GROUP
             (ORDER BY extract(epoch FROM updated_at - created_at)) * 1000 AS p50,
           percentile_cont(0.99) WITHIN GROUP
             (ORDER BY extract(epoch FROM updated_at - created_at)) * 1000 AS p99
      FROM workflow_executions
     WHERE created_at >= ${since}
       AND updated_at >= ${start} AND updated_at < ${end}
       AND status IN ('COMPLETED', 'FAILED', 'FAILED_ROLLED_BACK', 'CANCELLED')
     GROUP BY 1`.execute(store.db);
  const commands = await sql<{ bucket: Num; succeeded: Num; failed: Num }>`
    SELECT floor(extract(epoch FROM created_at) / ${step}) * ${step} AS bucket,
           count(*) FILTER (WHERE event_type = 'COMMAND_EXECUTED') AS succeeded,
           count(*) FILTER (WHERE event_type = 'COMMAND_FAILED') AS failed
      FROM command_audit_log
     WHERE created_at >= ${start} AND created_at < ${end}
       AND event_type IN ('COMMAND_EXECUTED', 'COMMAND_FAILED')
     GROUP BY 1`.execute(store.db);

  const out = new Map<number, BucketCounts>();
  const at = (bucket: Num) => {
    const key = Number(bucket);
    let counts = out.get(key);
    if (!counts) out.set(key, (counts = emptyCounts()));
    return counts;
  };
  const ms = (value: Num) => (value === null ? null : Math.round(Number(value) * 1000) / 1000);
  for (const row of workflows.rows) {
    const counts = at(row.bucket);
    counts.paymentsApprovedOnline = Number(row.online ?? 0);
    counts.paymentsApprovedOffline = Number(row.offline ?? 0);
    counts.workflowsEnded = Number(row.ended ?? 0);
    counts.latencyP50Ms = ms(row.p50);
    counts.latencyP99Ms = ms(row.p99);
  }
  for (const row of commands.rows) {
    const counts = at(row.bucket);
    counts.commandsSucceeded = Number(row.succeeded ?? 0);
    counts.commandsFailed = Number(row.failed ?? 0);
  }
  return out;
}
