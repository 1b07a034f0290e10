/**
 * Store-and-forward sync from a fleet at once: every device has a backlog of signed records
 * (signed when each offline payment completed, so before the clock starts) and uploads it in
 * batches through `POST /api/v1/transactions/batch`, one batch at a time per device over its
 * own keep-alive connection, each request device-signed as it is sent — all devices at the
 * same moment, as after a shared outage. The gateway verifies every request and record and
 * stores each batch in one transaction.
 *
 * Baseline: the same number of rows, the same columns and values the intake writes
 * (bench/gateway/saf.ts `rowOf`), by multi-row INSERTs of the same batch size, one commit
 * each, every batch submitted at once to a pool the size of the gateway's. Half the raw
 * batches run before the upload and half after, so drift in the machine's speed lands on
 * both sides.
 */
import { Agent } from 'node:http';
import pg from 'pg';
import { deviceAuthHeaders } from '../../runtime/crypto/index.js';
import { percentile } from '../harness.js';
import { deviceIdOf, deviceSecretOf } from '../gateway/fleet.js';
import { insertText, record, rowOf } from '../gateway/saf.js';
import { send } from '../gateway/http.js';
import { wallClock } from '../queue/system.js';

const PATH = '/api/v1/transactions/batch';

/** What the SAF measurement found. */
export interface SafSync {
  accepted: number;
  refused: number;
  recordsPerS: number;
  seconds: number;
  /** Per device: from the common start until its whole backlog was acknowledged, ascending. */
  deviceDoneMs: number[];
  requestP50Ms: number;
  requestP99Ms: number;
  rawRowsPerS: number;
}

/** Measure `devices` devices syncing `records` records each in batches of `batch`. */
export async function measureSafSync(options: {
  gatewayUrl: string;
  benchKey: string;
  devices: number;
  records: number;
  batch: number;
  /** The database and schema the raw baseline inserts into. */
  databaseUrl: string;
  schema: string;
  poolSize: number;
  progress: (m: string) => void;
}): Promise<SafSync> {
  const { gatewayUrl, benchKey, devices, records, batch, progress } = options;
  progress(`  signing ${devices * records} records of ${devices} devices`);
  const backlogs = Array.from({ length: devices }, (_, d) => {
    const deviceId = deviceIdOf(d);
    const secret = deviceSecretOf(benchKey, deviceId);
    const bodies: string[] = [];
    for (let from = 0; from < records; from += batch) {
      const n = Math.min(batch, records - from);
      const signed = Array.from({ length: n }, (_, i) => record(deviceId, secret, from + i + 1));
      bodies.push(JSON.stringify({ records: signed }));
    }
    return { deviceId, secret, bodies };
  });
  const rawBatches: unknown[][] = [];
  for (let d = 0; d < devices; d++)
    for (let from = 0; from < records; from += batch) {
      const n = Math.min(batch, records - from);
      const rows = Array.from({ length: n }, (_, i) =>
        rowOf(record(`bench-raw-${d}`, 'raw-side-secret', from + i + 1)),
      );
      rawBatches.push(rows.flat());
    }

  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolSize,
    options: `-c search_path=${options.schema}`,
  });
  pool.on('error', () => undefined); // a lost idle connection: the next query reconnects
  const rowWidth = rowOf(record('x', 'x', 1)).length;
  const rawRun = async (batches: unknown[][]) => {
    const started = performance.now();
    await Promise.all(
      batches.map((values) => pool.query(insertText(values.length / rowWidth), values)),
    );
    return (performance.now() - started) / 1000;
  };
  const half = Math.floor(rawBatches.length / 2);

  const agent = new Agent({ keepAlive: true, maxSockets: devices, maxFreeSockets: devices });
  let accepted = 0;
  let refused = 0;
  const requestMs: number[] = [];
  const deviceDoneMs: number[] = [];
  try {
    progress(`  raw baseline, first half: ${half} INSERTs of ≤ ${batch} rows`);
    let rawSeconds = await rawRun(rawBatches.slice(0, half));
    progress(`  ${devices} devices uploading ${records} records each, batches of ${batch}`);
    const began = wallClock();
    await Promise.all(
      backlogs.map(async ({ deviceId, secret, bodies }) => {
        for (const body of bodies) {
          const sentAt = wallClock();
          const answer = await send(agent, gatewayUrl, PATH, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...deviceAuthHeaders(deviceId, secret, { method: 'POST', pathWithQuery: PATH, body }),
            },
            body,
          });
          requestMs.push(wallClock() - sentAt);
          if (answer.status !== 200)
            throw new Error(
              `SAF upload of ${deviceId} answered ${answer.status}: ${answer.body.slice(0, 300)}`,
            );
          const r = JSON.parse(answer.body) as {
            synced_ids: string[];
            duplicates?: string[];
            rejected: unknown[];
          };
          const duplicates = r.duplicates?.length ?? 0;
          accepted += r.synced_ids.length - duplicates;
          refused += r.rejected.length + duplicates;
        }
        deviceDoneMs.push(wallClock() - began);
      }),
    );
    const seconds = (wallClock() - began) / 1000;
    progress(`  raw baseline, second half: ${rawBatches.length - half} INSERTs`);
    rawSeconds += await rawRun(rawBatches.slice(half));
    requestMs.sort((a, b) => a - b);
    deviceDoneMs.sort((a, b) => a - b);
    return {
      accepted,
      refused,
      recordsPerS: accepted / seconds,
      seconds,
      deviceDoneMs,
      requestP50Ms: percentile(requestMs, 50),
      requestP99Ms: percentile(requestMs, 99),
      rawRowsPerS: (devices * records) / rawSeconds,
    };
  } finally {
    agent.destroy();
    await pool.end();
  }
}
