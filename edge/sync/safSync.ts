/**
 * The store-and-forward uploader (docs/architecture.md#cloud-and-edge): sends PENDING records to
 * `POST /api/v1/transactions/batch` in sequence order, in batches, and writes down the
 * cloud's answer — SYNCED only for ids in `synced_ids` (duplicates included: the cloud
 * already holds them), REJECTED with the cloud's code for refused records.
 *
 * Exactly-once across crashes comes from the two sides together: a record stays PENDING
 * until an answer naming it is committed on the device, and the cloud keeps each workflow
 * id once and answers a repeat as a duplicate. So a lost response, a timeout or a power cut
 * between the cloud's commit and the device's just means the same records are sent again
 * and then marked — nothing is lost and nothing is stored twice.
 *
 * After the queue, each round uploads summaries of the workflows that ended on the device
 * since the last upload (listEndedWorkflows.ts; `POST /api/v1/devices/{id}/workflow-summaries`)
 * so operators see in the cloud what the terminal ran, online or not. Its cursor moves only
 * past summaries the cloud answered for; a rejected summary is reported (event
 * `edge.sync.summaries`) and not sent again; a cloud without the endpoint (404) is skipped
 * until the next round without failing the round.
 *
 * Scheduling runs on the background loop (runtime/loop): `start()` syncs at once, then
 * sweeps every `intervalMs` after a round ends; `notifyPending()` syncs soon after a record
 * is queued; a failed round backs off exponentially with jitter (Retry-After honoured) and
 * `notifyPending()` does not cut a backoff short — a busy terminal must not hammer a cloud
 * that is down. `notifyOnline()` forgets the backoff and syncs after a random per-device
 * delay of up to `outageJitterMs`: a fleet that lost its network together must not come back
 * in the same second. `syncNow()` never throws: the result's `error` says why a round
 * stopped early.
 *
 * `upload(request)` is the round a SYNC_TRANSACTIONS command asks for: the PENDING queue
 * capped at `maxRecords`, or — with `fromSequence` — a resend of the records held from that
 * sequence number on (resendBatches.ts). Rounds never overlap: one that finds another
 * running waits for it, so a resend and a background round never send the same rows at once;
 * `stop()` waits for the round in progress and for those queued behind it.
 */
import {
  backoffDelay,
  createBackgroundLoop,
  MAX_SAF_BATCH,
  SaffronError,
  toError,
  type BackoffPolicy,
  type EdgeStore,
} from '../../runtime/index.js';
import type { CloudClient } from '../cloud/cloudClient.js';
import { uploadTransactions } from '../cloud/uploadTransactions.js';
import { countPendingTransactions } from '../metrics/countPendingTransactions.js';
import { uploadWorkflowSummaries } from '../cloud/uploadWorkflowSummaries.js';
import {
  readSyncState,
  recordLastSync,
  SYNC_STATE_KEYS,
  writeSyncState,
} from '../state/syncState.js';
import { systemTimers, type EdgeTimers } from '../timers/timers.js';
import { SafSyncError } from './errors.js';
import { markUploadFailed } from './markUploadFailed.js';
import { listEndedWorkflows } from './listEndedWorkflows.js';
import { markUploadOutcome } from './markUploadOutcome.js';
import { pendingBatches, type BatchSource } from './pendingBatches.js';
import { resendBatches, type SafResendReport } from './resendBatches.js';
import { uploadBatch } from './uploadBatch.js';

/** Default records per upload. */
export const DEFAULT_SAF_BATCH_SIZE = 100;
/** Default backoff of failed rounds: 2 s doubling to 5 min, half of it random. */
export const DEFAULT_SAF_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 300_000 };

/** Why a sync was scheduled. */
export type SafSyncReason = 'start' | 'pending' | 'online' | 'backoff' | 'interval';

/** What a round did. */
export interface SafSyncResult {
  /** Records sent (a record sent twice in the round counts twice). */
  uploaded: number;
  /** Records the cloud holds, duplicates included (PENDING ones are marked SYNCED). */
  synced: number;
  /** Records the cloud refused (PENDING ones are marked REJECTED; a resent SYNCED one stays). */
  rejected: number;
  /** Records the cloud already held (a subset of `synced`). */
  duplicates: number;
  /** PENDING records left. */
  remaining: number;
  /** Workflow summaries the round uploaded, when it uploaded any. */
  summaries?: { synced: number; rejected: number };
  /** Why the round stopped before the queue was empty, when it did. */
  error?: { code: string; message: string; retryable: boolean };
}

/** What a SYNC_TRANSACTIONS command asks for. */
export interface SafUploadRequest {
  /** Send again the records held from this sequence number on (PENDING or SYNCED). */
  fromSequence?: number;
  /** Send at most this many records. */
  maxRecords?: number;
}

/** What a requested round did; `resend` when it was one. */
export interface SafUploadResult extends SafSyncResult {
  resend?: SafResendReport;
}

/** Events of the uploader. */
export type SafSyncEvent =
  | { type: 'edge.sync.scheduled'; reason: SafSyncReason; delayMs: number; failures: number }
  | {
      type: 'edge.sync.ack';
      uploaded: number;
      synced: string[];
      duplicates: string[];
      rejected: { workflowId: string; code: string }[];
      sequenceGaps: { from: number; to: number }[];
    }
  | {
      type: 'edge.sync.failed';
      code: string;
      message: string;
      retryable: boolean;
      /** The HTTP status, when the cloud answered. */
      status?: number;
    }
  | {
      type: 'edge.sync.summaries';
      synced: number;
      rejected: { workflowId: string; code: string }[];
    }
  | { type: 'edge.sync.summaries_unsupported'; status: number }
  | { type: 'edge.sync.done'; result: SafSyncResult };

/** What the uploader needs. */
export interface SafSyncOptions {
  store: EdgeStore;
  client: CloudClient;
  /** Records per upload (default 100, at most {@link MAX_SAF_BATCH}). */
  batchSize?: number;
  timers?: EdgeTimers;
  /** Backoff of failed rounds (default {@link DEFAULT_SAF_BACKOFF}). */
  backoff?: BackoffPolicy;
  /** Largest random delay before the sync that follows `notifyOnline()` (default 30 s). */
  outageJitterMs?: number;
  /** Returns a number in [0, 1) (default Math.random). */
  random?: () => number;
  onEvent?: (event: SafSyncEvent) => void;
  /** Sweep for PENDING records this often while started (default 60 s; 0: never). */
  intervalMs?: number;
  /** Give up on one upload after this long (default 30 s). */
  requestTimeoutMs?: number;
  /** Time of `synced_at` and of the last sync (default the wall clock). */
  now?: () => Date;
  /** Upload summaries of ended workflows after the queue (default true). */
  summaries?: boolean;
  /** Strings taken out of uploaded workflow summaries (the device secret). */
  secrets?: readonly string[];
}

/** The uploader of one device. */
export interface SafSync {
  /** Upload until the queue is empty or a round fails; never throws. */
  syncNow(): Promise<SafSyncResult>;
  /** Run the round a SYNC_TRANSACTIONS command asks for (see the module comment); never throws. */
  upload(request: SafUploadRequest): Promise<SafUploadResult>;
  /** Sync now, then in the background (see the module comment). */
  start(): void;
  /** Stop the background work; aborts an upload in flight and waits for it. */
  stop(): Promise<void>;
  /** Connectivity came back: sync after a jittered delay. */
  notifyOnline(): void;
  /** A record was queued: sync soon (unless backing off). */
  notifyPending(): void;
}

/** Where the summary upload stands: the last audit row answered for (0 before the first). */
async function readSummaryCursor(store: EdgeStore): Promise<number> {
  const entry = await readSyncState(store, SYNC_STATE_KEYS.summariesAfter);
  return typeof entry?.value === 'number' && Number.isSafeInteger(entry.value) ? entry.value : 0;
}

const infoOf = (error: unknown) => {
  const e = toError(error);
  return e instanceof SaffronError
    ? { code: e.code, message: e.message, retryable: e.retryable }
    : { code: 'INTERNAL', message: e.message, retryable: true };
};

/** Create the uploader (not started). */
export function createSafSync(options: SafSyncOptions): SafSync {
  const { store, client } = options;
  const batchSize = Math.min(
    Math.max(1, Math.floor(options.batchSize ?? DEFAULT_SAF_BATCH_SIZE)),
    MAX_SAF_BATCH,
  );
  const timers = options.timers ?? systemTimers;
  const backoff = options.backoff ?? DEFAULT_SAF_BACKOFF;
  const outageJitterMs = Math.max(0, options.outageJitterMs ?? 30_000);
  const random = options.random ?? Math.random;
  const intervalMs = options.intervalMs ?? 60_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const now = options.now ?? (() => new Date());
  const withSummaries = options.summaries ?? true;
  const secrets = options.secrets ?? [];
  const emit = (event: SafSyncEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // a listener's failure is not the uploader's
    }
  };

  let running = false;
  let stopping = false;
  /** The cloud's Retry-After of the last failed round, if it sent one. */
  let retryAfter: number | undefined;
  /** Why the loop's next timer is set, when not for the interval or a back-off. */
  let reason: SafSyncReason | undefined;
  /** The round in progress and those queued behind it. */
  let rounds: Promise<unknown> = Promise.resolve();
  const controllers = new Set<AbortController>();

  /** Run one request with the round's timeout; aborted by `stop()`. */
  const guarded = async <T>(request: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    controllers.add(controller);
    const timeout = timers.setTimeout(() => controller.abort(), requestTimeoutMs);
    try {
      return await request(controller.signal);
    } catch (error) {
      if (stopping)
        throw new SafSyncError('SAF_SYNC_STOPPED', 'the uploader was stopped during an upload', {
          cause: error,
        });
      throw error;
    } finally {
      timers.clearTimeout(timeout);
      controllers.delete(controller);
    }
  };

  /** One upload of the next batch of `source`; false when there was none, throws on failure. */
  const uploadOne = async (result: SafSyncResult, source: BatchSource): Promise<boolean> => {
    const batch = await source.next();
    if (batch.length === 0) return false;
    const ids = batch.map((r) => r.workflowId);
    result.uploaded += batch.length;
    let answer;
    try {
      answer = await guarded((signal) =>
        uploadBatch(
          () =>
            uploadTransactions(
              client,
              batch.map((r) => r.record),
              { signal },
            ),
          ids,
        ),
      );
    } catch (error) {
      if (!(error instanceof SafSyncError && error.code === 'SAF_SYNC_STOPPED'))
        await markUploadFailed(store, ids, error instanceof SaffronError ? error.code : 'INTERNAL');
      throw error;
    }
    const at = now();
    await store.transaction(async (tx) => {
      await markUploadOutcome(
        tx,
        { attempted: ids, synced: answer.synced, rejected: answer.rejected },
        at,
      );
      await recordLastSync(tx, at);
    });
    result.synced += answer.synced.length;
    result.duplicates += answer.duplicates.length;
    result.rejected += answer.rejected.length;
    emit({
      type: 'edge.sync.ack',
      uploaded: batch.length,
      synced: answer.synced,
      duplicates: answer.duplicates,
      rejected: answer.rejected,
      sequenceGaps: answer.sequenceGaps,
    });
    if (answer.synced.length + answer.rejected.length === 0)
      throw new SafSyncError(
        'SAF_UPLOAD_NO_PROGRESS',
        `the cloud answered a batch of ${batch.length} without accepting or rejecting any record`,
        { retryable: true },
      );
    return true;
  };

  /**
   * Upload the summaries of the next workflows that ended; false when there were none or
   * the cloud does not take summaries, throws on failure.
   */
  const uploadSummaries = async (result: SafSyncResult): Promise<boolean> => {
    const after = await readSummaryCursor(store);
    const page = await listEndedWorkflows(store, after, batchSize, secrets);
    if (page.lastAuditId === after) return false;
    if (page.summaries.length > 0) {
      const ids = page.summaries.map((s) => s.workflow_id);
      let answer;
      try {
        answer = await guarded((signal) =>
          uploadBatch(() => uploadWorkflowSummaries(client, page.summaries, { signal }), ids),
        );
      } catch (error) {
        const status = error instanceof SafSyncError ? error.details.status : undefined;
        if (status !== 404 && status !== 405) throw error;
        emit({ type: 'edge.sync.summaries_unsupported', status });
        return false;
      }
      const answered = answer.synced.length + answer.rejected.length;
      result.summaries ??= { synced: 0, rejected: 0 };
      result.summaries.synced += answer.synced.length;
      result.summaries.rejected += answer.rejected.length;
      emit({
        type: 'edge.sync.summaries',
        synced: answer.synced.length,
        rejected: answer.rejected,
      });
      if (answered < ids.length)
        throw new SafSyncError(
          'SAF_UPLOAD_NO_PROGRESS',
          `the cloud answered for ${answered} of ${ids.length} workflow summaries`,
          { retryable: true },
        );
    }
    await writeSyncState(store, SYNC_STATE_KEYS.summariesAfter, page.lastAuditId, now());
    return true;
  };

  const runOnce = async (source: BatchSource): Promise<SafSyncResult> => {
    const result: SafSyncResult = {
      uploaded: 0,
      synced: 0,
      rejected: 0,
      duplicates: 0,
      remaining: 0,
    };
    try {
      while (await uploadOne(result, source)) {
        // next batch
      }
      while (withSummaries && (await uploadSummaries(result))) {
        // next page
      }
    } catch (error) {
      const info = infoOf(error);
      const status =
        error instanceof SafSyncError && typeof error.details.status === 'number'
          ? error.details.status
          : undefined;
      result.error = info;
      emit({ type: 'edge.sync.failed', ...info, ...(status !== undefined ? { status } : {}) });
      if (error instanceof SafSyncError && error.retryAfterMs !== undefined)
        retryAfter = error.retryAfterMs;
    }
    try {
      result.remaining = await countPendingTransactions(store);
    } catch (error) {
      result.error ??= infoOf(error);
    }
    emit({ type: 'edge.sync.done', result });
    return result;
  };

  /** Run `round` once no other round is running; `stop()` waits for it. */
  const alone = <R>(round: () => Promise<R>): Promise<R> => {
    const run = rounds.then(round);
    rounds = run.catch(() => undefined);
    return run;
  };

  const loop = createBackgroundLoop({
    intervalMs: intervalMs > 0 ? intervalMs : Infinity,
    firstDelayMs: Infinity, // start() asks for the first round
    timers,
    pass: () => alone(() => runOnce(pendingBatches(store, batchSize))),
    failed: (result) => result.error !== undefined && result.error.code !== 'SAF_SYNC_STOPPED',
    delayAfterFailure: (failures) => {
      const wait = Math.max(backoffDelay(backoff, failures, random), retryAfter ?? 0);
      retryAfter = undefined;
      return wait;
    },
    onSchedule: (delayMs) => {
      const failures = loop.failures;
      emit({
        type: 'edge.sync.scheduled',
        reason: reason ?? (failures > 0 ? 'backoff' : 'interval'),
        delayMs,
        failures,
      });
      reason = undefined;
    },
    onError: () => undefined, // a round never throws: its result says what failed
  });

  /** The next round in `delayMs` (rounded), for `why`. */
  const scheduleFor = (why: SafSyncReason, delayMs: number) => {
    reason = why;
    loop.runIn(Math.max(0, Math.round(delayMs)));
  };

  // a round asked for during another runs after it: the one running may have missed records
  const syncNow = (): Promise<SafSyncResult> => loop.runNext();

  const upload = (request: SafUploadRequest): Promise<SafUploadResult> => {
    const { fromSequence, maxRecords } = request;
    if (fromSequence === undefined)
      return maxRecords === undefined
        ? syncNow()
        : alone(() => runOnce(pendingBatches(store, batchSize, maxRecords)));
    return alone(async () => {
      const walk = resendBatches(store, batchSize, { fromSequence, maxRecords });
      const result: SafUploadResult = await runOnce(walk);
      try {
        result.resend = await walk.report();
      } catch (error) {
        result.error ??= infoOf(error);
      }
      return result;
    });
  };

  return {
    syncNow,
    upload,
    start() {
      if (running) return;
      running = true;
      stopping = false;
      loop.resetFailures();
      loop.start();
      scheduleFor('start', 0);
    },
    async stop() {
      running = false;
      stopping = true;
      reason = undefined;
      const stopped = loop.stop();
      for (const controller of controllers) controller.abort();
      await stopped;
      await rounds;
      stopping = false;
    },
    notifyOnline() {
      if (!running) return;
      loop.resetFailures();
      scheduleFor('online', random() * outageJitterMs);
    },
    notifyPending() {
      // a round already running is followed by one more (runIn waits for its end)
      if (!running || loop.failures > 0) return;
      scheduleFor('pending', 0);
    },
  };
}
