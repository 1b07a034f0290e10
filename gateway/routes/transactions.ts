/**
 * Store-and-forward intake (docs/architecture.md#security, #cloud-and-edge): `POST /api/v1/transactions/batch`, device only.
 * Body `{records: [...]}` (a bare array, as the spec words it, is accepted too), 1 to 500
 * records (schema: runtime/saf/record.ts). Each record is checked on its own, in this order,
 * and a failure rejects that record only:
 *
 * 1. `CARD_DATA_IN_CLEAR` — something in it looks like a card number (runtime/saf/clearPan.ts);
 *    the record is neither stored nor logged, and the message names only where.
 * 2. `INVALID_RECORD` (with `errors` by path) or `RECORD_TOO_LARGE`.
 * 3. `DEVICE_MISMATCH` — `device_id` is not the authenticated caller.
 * 4. `INVALID_SIGNATURE` — HMAC-SHA256 with the device secret over the canonical JSON of
 *    the record without `signature` does not match (constant-time).
 * 5. Within the batch: a repeated `workflow_id` with other content is `IDEMPOTENCY_CONFLICT`,
 *    a repeated `device_sequence` with another id `SEQUENCE_CONFLICT` (an exact repeat
 *    counts once).
 * 6. Against what is stored, in ONE transaction for the whole batch: new → stored; same id,
 *    same device, same content → duplicate; same id otherwise → `IDEMPOTENCY_CONFLICT`;
 *    sequence number taken by another id → `SEQUENCE_CONFLICT`.
 *
 * Response `{synced_ids, duplicates, rejected: [{id, index, code, message}], sequence_gaps?}`.
 * `synced_ids` lists every record the cloud now durably holds — stored by this request or
 * an earlier one — so a device that retries an upload (its first response was lost) marks
 * everything synced either way; `duplicates` is the subset that was already held. A
 * rejected record is not stored; the device keeps it (and an operator looks at it).
 * `sequence_gaps` lists missing sequence numbers around the upload (inclusive ranges).
 *
 * The device's status is SYNCING while the batch is processed (through its actor).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { devEvents } from '../../actors/index.js';
import { applyDeviceEvent } from '../fleet/deviceHost.js';
import {
  MAX_SAF_BATCH,
  MAX_SAF_RECORD_BYTES,
  safRecordSchema,
  verifySigningText,
  type SafRecord,
} from '../../runtime/index.js';
import {
  insertSafTransactions,
  type NewSafTransaction,
} from '../devices/store/saf/insertSafTransactions.js';
import type { GatewayContext } from '../context.js';
import { route } from '../route.js';
import {
  answerUpload,
  checkItem,
  firstOfEachId,
  rejectItem,
  uploadResponse,
  type CheckedItem,
  type ItemRules,
  type UploadRejection,
} from './uploadItems.js';

/** Largest upload: a full batch of the largest records, with room for the envelope. */
export const SAF_BATCH_BODY_LIMIT = MAX_SAF_BATCH * (MAX_SAF_RECORD_BYTES + 1024) + 64 * 1024;

const records = z
  .array(
    z
      .unknown()
      .meta({ description: 'a signed transaction record (see docs/reference/http-api.md)' }),
  )
  .min(1)
  .max(MAX_SAF_BATCH);

/** `{records: [...]}`; a bare array (as the spec words it) is taken as its records. */
const batchBody = z.preprocess(
  (value) => (Array.isArray(value) ? { records: value } : value),
  z.strictObject({ records }),
);

/** What the document shows: both forms (validation normalises the array first). */
const documentedBatchBody = z.union([records, z.strictObject({ records })]);

const batchResponse = uploadResponse.extend({
  sequence_gaps: z.array(z.object({ from: z.number().int(), to: z.number().int() })).optional(),
});

/** The record without its signature: what is signed, and what is stored. */
const unsignedOf = ({ signature: _signature, ...unsigned }: Record<string, unknown>) => unsigned;

const recordRules: ItemRules<SafRecord> = {
  schema: safRecordSchema,
  noun: 'record',
  invalidCode: 'INVALID_RECORD',
  tooLargeCode: 'RECORD_TOO_LARGE',
  maxBytes: MAX_SAF_RECORD_BYTES,
  cardAdvice: 'send cards as token, last4 and encrypted_payload',
  // the signing text (signature.ts recordSigningText) is the record without its signature
  measured: (raw) => unsignedOf(raw),
};

/** Check one record; a rejection or the verified record. */
function verify(
  raw: unknown,
  index: number,
  deviceId: string,
  secrets: readonly string[],
): UploadRejection | CheckedItem<SafRecord> {
  const checked = checkItem(recordRules, raw, index);
  if (!('item' in checked)) return checked;
  if (checked.item.device_id !== deviceId)
    return rejectItem(
      raw,
      index,
      'DEVICE_MISMATCH',
      'the record names another device than the one uploading it',
    );
  if (!verifySigningText(secrets, checked.content, checked.item.signature))
    return rejectItem(
      raw,
      index,
      'INVALID_SIGNATURE',
      'the record signature does not verify with the device key',
    );
  return checked;
}

/** Register the SAF intake route. */
export function registerTransactionRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/transactions/batch',
      summary: 'device: upload store-and-forward transaction records (up to 500, each signed)',
      tags: ['transactions'],
      access: { roles: [], devices: true },
      body: batchBody,
      documentedBody: documentedBatchBody,
      response: batchResponse,
      bodyLimit: SAF_BATCH_BODY_LIMIT,
    },
    async ({ body, principal }) => {
      // users were refused by the route (no roles); this is a device
      const deviceId = principal.kind === 'device' ? principal.deviceId : '';
      // the secrets that just authenticated the request, from memory (auth/credentialCache.ts)
      const secrets = await ctx.auth.credentials.secrets(deviceId, ctx.now().getTime());
      const rejected: UploadRejection[] = [];
      const verified: CheckedItem<SafRecord>[] = [];
      for (const [index, raw] of body.records.entries()) {
        const checked = verify(raw, index, deviceId, secrets);
        if ('item' in checked) verified.push(checked);
        else rejected.push(checked);
      }
      const accepted: CheckedItem<SafRecord>[] = [];
      const bySequence = new Map<number, CheckedItem<SafRecord>>();
      for (const checked of firstOfEachId(verified, rejected)) {
        const { workflow_id: id, device_sequence: sequence } = checked.item;
        const sameSequence = bySequence.get(sequence);
        if (sameSequence) {
          rejected.push({
            id,
            index: checked.index,
            code: 'SEQUENCE_CONFLICT',
            message: `device_sequence ${sequence} is used earlier in this batch (index ${sameSequence.index})`,
          });
          continue;
        }
        bySequence.set(sequence, checked);
        accepted.push(checked);
      }

      await applyDeviceEvent(ctx.store, deviceId, devEvents.syncStarted(), ctx.now());
      try {
        const result = await insertSafTransactions(
          ctx.store,
          deviceId,
          accepted.map(({ item: record, raw }): NewSafTransaction => ({
            transactionId: randomUUID(),
            workflowId: record.workflow_id,
            deviceSequence: record.device_sequence,
            workflowType: record.workflow_type,
            workflowVersion: record.workflow_version ?? null,
            amountMinor: record.amount_minor ?? null,
            currency: record.currency ?? null,
            cardToken: record.card?.token ?? null,
            cardLast4: record.card?.last4 ?? null,
            encryptedPayload: record.card?.encrypted_payload ?? null,
            record: unsignedOf(raw),
            signature: record.signature,
            offlineCreatedAt: new Date(record.created_at),
          })),
          ctx.now(),
        );
        return {
          ...answerUpload(accepted, result.outcomes, rejected),
          ...(result.gaps.length > 0 ? { sequence_gaps: result.gaps } : {}),
        };
      } finally {
        await applyDeviceEvent(ctx.store, deviceId, devEvents.syncFinished(), ctx.now());
      }
    },
  );
}
