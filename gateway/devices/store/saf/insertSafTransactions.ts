/**
 * Store one SAF upload in one transaction: one insert of the whole batch with ON CONFLICT DO
 * NOTHING (cloud tier; the rows travel as one JSON array, so the statement text is the same
 * for every batch and prepared once, with no per-value encoding), then the rows that did not go in are classified against what is stored —
 *
 * - same idempotency key, same device, same content → `duplicate` (a retried upload: the
 *   record is held, so the device may mark it synced);
 * - same idempotency key, another device or other content → `IDEMPOTENCY_CONFLICT`;
 * - key unused but the device's sequence number taken → `SEQUENCE_CONFLICT`.
 *
 * The device row is locked for the transaction (concurrent uploads of one device take
 * turns), `last_sync` and `last_sequence_number` move forward, and the sequence gaps around
 * what this upload touched are computed from the committed-to-be state. Records must be
 * distinct by key and by sequence number (the caller settles repeats within a batch).
 * An upload that stored at least one new record emits the `saf.batch_synced` webhook event
 * in the same transaction; a retried upload of records already held emits nothing again.
 */
import { sql } from 'kysely';
import { canonicalJson, executeCached, translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore } from '../../../../runtime/index.js';
import { findSequenceGaps, type SequenceGap } from './findSequenceGaps.js';
import { emitWebhookEvent } from '../../../webhooks/store/webhooks/emitWebhookEvents.js';

/** A verified record to store. */
export interface NewSafTransaction {
  transactionId: string;
  /** The workflow id: the idempotency key. */
  workflowId: string;
  deviceSequence: number;
  workflowType: string;
  workflowVersion: string | null;
  amountMinor: number | null;
  currency: string | null;
  cardToken: string | null;
  cardLast4: string | null;
  encryptedPayload: string | null;
  /** The record without its signature. */
  record: Record<string, unknown>;
  signature: string;
  offlineCreatedAt: Date;
}

/** What happened to one record. */
export type SafInsertOutcome =
  | { kind: 'stored' }
  | { kind: 'duplicate' }
  | { kind: 'rejected'; code: 'IDEMPOTENCY_CONFLICT' | 'SEQUENCE_CONFLICT'; message: string };

/** The result of one upload. */
export interface SafBatchResult {
  /** Outcome per record, by workflow id. */
  outcomes: Map<string, SafInsertOutcome>;
  /** Missing sequence numbers around this upload. */
  gaps: SequenceGap[];
}

/** Store `records` of `deviceId` (see the module comment). */
export async function insertSafTransactions(
  store: CloudStore,
  deviceId: string,
  records: readonly NewSafTransaction[],
  now: Date,
): Promise<SafBatchResult> {
  try {
    return await store.transaction(async (tx) => {
      const device = await tx.cloud
        .selectFrom('edge_devices')
        .select('last_sequence_number')
        .where('device_id', '=', deviceId)
        .forUpdate()
        .executeTakeFirst();
      const previousLast = device ? tx.codec.parseInt(device.last_sequence_number) : 0;
      const outcomes = new Map<string, SafInsertOutcome>();
      if (records.length === 0) return { outcomes, gaps: [] };

      const rows = tx.codec.json(
        records.map((r, ord) => ({
          ord,
          transaction_id: r.transactionId,
          device_sequence: r.deviceSequence,
          idempotency_key: r.workflowId,
          workflow_type: r.workflowType,
          workflow_version: r.workflowVersion,
          amount_minor: r.amountMinor,
          currency: r.currency,
          card_token: r.cardToken,
          card_last4: r.cardLast4,
          encrypted_payload: r.encryptedPayload,
          record: r.record,
          signature: r.signature,
          offline_created_at: r.offlineCreatedAt.toISOString(),
        })),
      );
      const received = tx.codec.time(now);
      const { rows: inserted } = await executeCached(
        tx,
        'insertSafTransactions',
        [deviceId, received, rows],
        () => ({
          compile: () =>
            sql<{ idempotency_key: string }>`
          INSERT INTO saf_transactions (transaction_id, device_id, device_sequence,
            idempotency_key, workflow_type, workflow_version, amount_minor, currency, card_token,
            card_last4, encrypted_payload, record, signature, offline_created_at, received_at)
          SELECT r.transaction_id, ${deviceId}, r.device_sequence, r.idempotency_key,
            r.workflow_type, r.workflow_version, r.amount_minor, r.currency, r.card_token,
            r.card_last4, r.encrypted_payload, r.record, r.signature, r.offline_created_at,
            ${received}::timestamptz
          FROM jsonb_to_recordset(${rows}::jsonb) AS r(ord int, transaction_id uuid,
            device_sequence bigint, idempotency_key text, workflow_type text,
            workflow_version text, amount_minor bigint, currency text, card_token text,
            card_last4 text, encrypted_payload text, record jsonb, signature text,
            offline_created_at timestamptz)
          ORDER BY r.ord
          ON CONFLICT DO NOTHING
          RETURNING idempotency_key`.compile(tx.db),
        }),
      );
      for (const row of inserted) outcomes.set(row.idempotency_key, { kind: 'stored' });

      const leftovers = records.filter((r) => !outcomes.has(r.workflowId));
      if (leftovers.length > 0) {
        const existing = await tx.cloud
          .selectFrom('saf_transactions')
          .select(['idempotency_key', 'device_id', 'record'])
          .where(
            'idempotency_key',
            'in',
            leftovers.map((r) => r.workflowId),
          )
          .execute();
        const byKey = new Map(existing.map((row) => [row.idempotency_key, row]));
        for (const r of leftovers) {
          const held = byKey.get(r.workflowId);
          if (!held)
            outcomes.set(r.workflowId, {
              kind: 'rejected',
              code: 'SEQUENCE_CONFLICT',
              message: `sequence number ${r.deviceSequence} is already used by another record of this device`,
            });
          else if (
            held.device_id === deviceId &&
            canonicalJson(tx.codec.parseJson(held.record)) === canonicalJson(r.record)
          )
            outcomes.set(r.workflowId, { kind: 'duplicate' });
          else
            outcomes.set(r.workflowId, {
              kind: 'rejected',
              code: 'IDEMPOTENCY_CONFLICT',
              message: 'a different record with this workflow_id is already stored',
            });
        }
      }

      const synced = records.filter((r) => outcomes.get(r.workflowId)?.kind !== 'rejected');
      if (synced.length === 0) return { outcomes, gaps: [] };
      const sequences = synced.map((r) => r.deviceSequence);
      const highest = Math.max(...sequences);
      await tx.cloud
        .updateTable('edge_devices')
        .set({
          last_sync: tx.codec.time(now),
          last_sequence_number: Math.max(previousLast, highest),
        })
        .where('device_id', '=', deviceId)
        .execute();
      const from = Math.min(previousLast + 1, ...sequences);
      const gaps = await findSequenceGaps(tx, deviceId, from, highest);
      const stored = records.filter((r) => outcomes.get(r.workflowId)?.kind === 'stored');
      if (stored.length > 0)
        await emitWebhookEvent(
          tx,
          'saf.batch_synced',
          {
            device_id: deviceId,
            stored: stored.length,
            duplicates: synced.length - stored.length,
            conflicts: records.length - synced.length,
            workflow_ids: stored.map((r) => r.workflowId),
            last_sequence_number: Math.max(previousLast, highest),
          },
          now,
        );
      return { outcomes, gaps };
    });
  } catch (error) {
    throw translateDriverError(
      error,
      `store ${records.length} SAF record(s) of device ${deviceId}`,
    );
  }
}
