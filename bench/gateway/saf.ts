/**
 * Store-and-forward intake: signed records uploaded in batches of 500 through
 * `POST /api/v1/transactions/batch` (device-signed request; per record: schema, card-number
 * scan, canonical JSON, HMAC check; one transaction storing the batch, plus the device's
 * SYNCING status around it), against raw PostgreSQL inserting equivalent rows — the same
 * columns and values the intake writes, 500 to a multi-row INSERT, one commit each — with the
 * same number of batches in flight. Both sides run in alternating rounds, so drift in the
 * machine's commit latency lands on both; each side's rate is its rows over its own time.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { deviceAuthHeaders } from '../../runtime/crypto/index.js';
import { signTransactionRecord } from '../../runtime/saf/index.js';
import { deviceIdOf, deviceSecretOf } from './fleet.js';
import { keepAlive, send } from './http.js';

const PATH = '/api/v1/transactions/batch';

/** What the SAF measurement found. */
export interface SafResult {
  recordsPerS: number;
  rawRowsPerS: number;
  accepted: number;
  refused: number;
}

/** A record as a device uploads it (signature included). */
export function record(
  deviceId: string,
  secret: string,
  sequence: number,
): Record<string, unknown> {
  const unsigned = {
    workflow_id: randomUUID(),
    device_id: deviceId,
    workflow_type: 'payment_authorization',
    workflow_version: '1',
    device_sequence: sequence,
    amount_minor: 1000 + (sequence % 5000),
    currency: 'EUR',
    card: {
      token: `tok_${sequence.toString(36)}`,
      last4: '4242',
      encrypted_payload: Buffer.alloc(48, sequence % 251).toString('base64'),
    },
    final_state: { approved: true, approval_code: `OFF-${sequence}`, floor_limit_minor: 5000 },
    created_at: '2025-03-01T10:00:00Z',
    completed_at: '2025-03-01T10:00:02.5Z',
  };
  return { ...unsigned, signature: signTransactionRecord(secret, unsigned) };
}

const COLUMNS = [
  'transaction_id',
  'device_id',
  'device_sequence',
  'idempotency_key',
  'workflow_type',
  'workflow_version',
  'amount_minor',
  'currency',
  'card_token',
  'card_last4',
  'encrypted_payload',
  'record',
  'signature',
  'offline_created_at',
  'received_at',
] as const;

/** The row the intake stores for `r` (its columns in {@link COLUMNS} order). */
export function rowOf(r: Record<string, unknown>): unknown[] {
  const { signature, ...unsigned } = r;
  const card = r.card as { token: string; last4: string; encrypted_payload: string };
  return [
    randomUUID(),
    r.device_id,
    r.device_sequence,
    r.workflow_id,
    r.workflow_type,
    r.workflow_version,
    r.amount_minor,
    r.currency,
    card.token,
    card.last4,
    card.encrypted_payload,
    JSON.stringify(unsigned),
    signature,
    r.created_at,
    new Date().toISOString(),
  ];
}

/** A multi-row INSERT of `rows` rows of {@link rowOf} into `saf_transactions`. */
export function insertText(rows: number): string {
  const values = Array.from(
    { length: rows },
    (_, i) => `(${COLUMNS.map((_, c) => `$${i * COLUMNS.length + c + 1}`).join(', ')})`,
  );
  return `INSERT INTO saf_transactions (${COLUMNS.join(', ')}) VALUES ${values.join(', ')}`;
}

/** Run `work(i)` for i in 0…count-1 with `inFlight` at a time; seconds taken. */
async function timed(count: number, inFlight: number, work: (i: number) => Promise<void>) {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await work(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Measure SAF intake through the gateway at `url` against raw inserts through `pool`. */
export async function measureSaf(options: {
  url: string;
  benchKey: string;
  /** Device numbers uploading through the gateway. */
  devices: readonly number[];
  /** Batches per side. */
  batches: number;
  batchSize: number;
  inFlight: number;
  rounds: number;
  pool: pg.Pool;
  progress: (m: string) => void;
}): Promise<SafResult> {
  const { url, benchKey, devices, batches, batchSize, inFlight, pool, progress } = options;
  const rounds = Math.max(1, Math.min(options.rounds, batches));
  const agent = keepAlive(inFlight);
  const sequences = new Map<string, number>();
  const nextSequence = (deviceId: string) => {
    const n = (sequences.get(deviceId) ?? 0) + 1;
    sequences.set(deviceId, n);
    return n;
  };
  const batch = (deviceId: string, secret: string) =>
    Array.from({ length: batchSize }, () => record(deviceId, secret, nextSequence(deviceId)));

  progress(`  preparing ${batches} signed batches of ${batchSize} per side`);
  const uploads = Array.from({ length: batches }, (_, b) => {
    const deviceId = deviceIdOf(devices[b % devices.length]!);
    const body = JSON.stringify({ records: batch(deviceId, deviceSecretOf(benchKey, deviceId)) });
    return { deviceId, body };
  });
  // the raw side writes rows of devices of its own (a device's sequence numbers are unique)
  const rawBatches = Array.from({ length: batches }, (_, b) => {
    const deviceId = `bench-raw-${b % devices.length}`;
    return batch(deviceId, 'raw-side-secret').flatMap(rowOf);
  });
  const text = insertText(batchSize);

  let accepted = 0;
  let refused = 0;
  const upload = async (i: number) => {
    const { deviceId, body } = uploads[i]!;
    const answer = await send(agent, url, PATH, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...deviceAuthHeaders(deviceId, deviceSecretOf(benchKey, deviceId), {
          method: 'POST',
          pathWithQuery: PATH,
          body,
        }),
      },
      body,
    });
    if (answer.status !== 200)
      throw new Error(`SAF upload answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    const result = JSON.parse(answer.body) as {
      synced_ids: string[];
      duplicates: string[];
      rejected: unknown[];
    };
    accepted += result.synced_ids.length - result.duplicates.length;
    refused += result.rejected.length + result.duplicates.length;
  };
  const insert = async (i: number) => {
    await pool.query(text, rawBatches[i]);
  };

  let gatewaySeconds = 0;
  let rawSeconds = 0;
  const perRound = Math.ceil(batches / rounds);
  for (let r = 0; r < rounds; r++) {
    const from = r * perRound;
    const n = Math.min(perRound, batches - from);
    if (n <= 0) break;
    gatewaySeconds += await timed(n, inFlight, (i) => upload(from + i));
    rawSeconds += await timed(n, inFlight, (i) => insert(from + i));
    progress(`  round ${r + 1}/${rounds}: ${(from + n) * batchSize} records each side`);
  }
  agent.destroy();
  const rows = batches * batchSize;
  return {
    recordsPerS: accepted / gatewaySeconds,
    rawRowsPerS: rows / rawSeconds,
    accepted,
    refused,
  };
}
