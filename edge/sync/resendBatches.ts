/**
 * The batches of a resend — SYNC_TRANSACTIONS with `since_sequence`, how an operator recovers
 * after the cloud lost records or saw a sequence gap: every record the device still holds
 * from that sequence number on, PENDING or SYNCED, lowest first, in batches of the
 * uploader's size and at most `maxRecords` in all. They go through the ordinary upload, so
 * the cloud answers the records it already holds as duplicates and the usual marking applies
 * (it changes PENDING rows only: a SYNCED record stays SYNCED with its `synced_at`, whatever
 * the answer, and a failed upload does not count an attempt against it).
 *
 * REJECTED records are walked past and counted, not sent: the cloud refused them for a
 * reason (a bad signature, a reused sequence number) that sending them again does not
 * change, and an operator deals with them on the device. They are counted only up to the
 * last record sent — or to the end when the walk ran out of records.
 *
 * The report also gives the range the device still holds, so an operator sees when records
 * from `since_sequence` on are gone from it (they cannot be sent again from here).
 */
import type { EdgeHandle } from '../../runtime/index.js';
import type { PendingRecord } from './listPendingRecords.js';
import { listRecordsFrom } from './listRecordsFrom.js';
import type { BatchSource } from './pendingBatches.js';
import { readHeldSequences } from './readHeldSequences.js';

/** What a resend asks for. */
export interface ResendRequest {
  /** Send the records from this sequence number on. */
  fromSequence: number;
  /** Send at most this many (default: all of them). */
  maxRecords?: number;
}

/** What a resend covered, besides the round's figures. */
export interface SafResendReport {
  fromSequence: number;
  /** The highest sequence number sent; null when nothing was. */
  highestSent: number | null;
  /** REJECTED records in the range walked, not sent. */
  skippedRejected: number;
  /** The lowest sequence number the device still holds; null when it holds none. */
  lowestHeld: number | null;
  /** The highest sequence number the device holds; null when it holds none. */
  highestHeld: number | null;
}

/** A resend's batches, and its report once the round is over. */
export interface ResendBatches extends BatchSource {
  report(): Promise<SafResendReport>;
}

/** Walk the records from `request.fromSequence` on (see the module comment). */
export function resendBatches(
  h: EdgeHandle,
  batchSize: number,
  request: ResendRequest,
): ResendBatches {
  let cursor = request.fromSequence;
  let left = request.maxRecords ?? Number.POSITIVE_INFINITY;
  let exhausted = false;
  let highestSent: number | null = null;
  let skippedRejected = 0;

  const next = async (): Promise<PendingRecord[]> => {
    const size = Math.min(batchSize, left);
    const batch: PendingRecord[] = [];
    while (batch.length < size && !exhausted) {
      const want = size - batch.length;
      const rows = await listRecordsFrom(h, cursor, want);
      if (rows.length < want) exhausted = true;
      for (const row of rows) {
        cursor = row.sequence + 1;
        if (row.status === 'REJECTED') skippedRejected++;
        else batch.push(row);
      }
    }
    left -= batch.length;
    highestSent = batch.at(-1)?.sequence ?? highestSent;
    return batch;
  };

  const report = async (): Promise<SafResendReport> => {
    const held = await readHeldSequences(h);
    return {
      fromSequence: request.fromSequence,
      highestSent,
      skippedRejected,
      lowestHeld: held?.lowest ?? null,
      highestHeld: held?.highest ?? null,
    };
  };

  return { next, report };
}
