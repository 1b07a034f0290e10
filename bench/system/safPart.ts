/**
 * Part 2 of the system benchmark: store-and-forward sync from 1,000 devices at once through
 * one gateway process (bench/system/saf.ts), against raw batched inserts of the same rows.
 */
import { percentile, round, type BenchResult } from '../harness.js';
import { startCloud } from './cloud.js';
import { measureSafSync } from './saf.js';
import type { SystemSettings } from './settings.js';
import type { FlowContext } from './workflows.js';

/** The gateway's connection pool (and the raw baseline's). */
const POOL = 10;

/** Run part 2 into `result`. */
export async function runSafPart(
  s: SystemSettings,
  shared: Pick<FlowContext, 'url' | 'schemas' | 'live' | 'progress'>,
  result: BenchResult,
): Promise<void> {
  const { progress } = shared;
  progress(`saf: ${s.safDevices} devices registered, one gateway process (pool ${POOL})`);
  const cloud = await startCloud({
    url: shared.url,
    schemas: shared.schemas,
    devices: s.safDevices,
    poolSize: POOL,
    live: shared.live,
  });
  try {
    const sync = await measureSafSync({
      gatewayUrl: cloud.url,
      benchKey: cloud.benchKey,
      devices: s.safDevices,
      records: s.safRecords,
      batch: s.safBatch,
      databaseUrl: shared.url,
      schema: cloud.schema,
      poolSize: POOL,
      progress,
    });
    progress(
      `  ${Math.round(sync.recordsPerS)} records/s accepted (${sync.accepted} in ${sync.seconds.toFixed(2)} s); raw batched inserts ${Math.round(sync.rawRowsPerS)} rows/s`,
    );
    result.metrics.saf_devices = s.safDevices;
    result.metrics.saf_records_per_s = round(sync.recordsPerS);
    result.metrics.saf_sync_seconds = round(sync.seconds);
    result.metrics.saf_device_synced_p50_ms = round(percentile(sync.deviceDoneMs, 50));
    result.metrics.saf_device_synced_p99_ms = round(percentile(sync.deviceDoneMs, 99));
    result.metrics.saf_request_p50_ms = round(sync.requestP50Ms);
    result.metrics.saf_request_p99_ms = round(sync.requestP99Ms);
    result.baselines.raw_batch_insert_rows_per_s = round(sync.rawRowsPerS);
    result.ratios.saf_vs_raw_batch_insert = round(sync.recordsPerS / sync.rawRowsPerS);
    if (sync.refused > 0 || sync.accepted !== s.safDevices * s.safRecords)
      result.notes.push(
        `saf: ${sync.accepted} of ${s.safDevices * s.safRecords} records accepted, ${sync.refused} refused or duplicate`,
      );
    result.notes.push(
      `saf: ${s.safDevices} devices × ${s.safRecords} signed records, uploaded in batches of ${s.safBatch} (one request in flight per device, all devices at once, each over its own keep-alive connection, each request device-signed) to one gateway process with a pool of ${POOL}; saf_records_per_s = records accepted ÷ time from the first request to the last answer; saf_device_synced_*: per device, until its whole backlog was acknowledged; baseline: the same rows as multi-row INSERTs of ${s.safBatch}, all submitted at once to a pool of ${POOL}, half before and half after the upload; the edge agent (edge/sync/safSync.ts) uploads batches of 100 and, after an outage, waits a random delay of up to 30 s before its first upload and gives a request 30 s — here every device starts at the same moment (the worst case) and no request is abandoned`,
    );
  } finally {
    await cloud.stop();
  }
}
