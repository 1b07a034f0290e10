/**
 * Store-and-forward intake (DESIGN §5–6): `POST /api/v1/transactions/batch`, device only.
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
import { applyDeviceEvent, devEvents } from '../../actors/index.js';
import {
  canonicalJson,
  findClearPan,
  insertSafTransactions,
  MAX_SAF_BATCH,
  MAX_SAF_RECORD_BYTES,
  safRecordSchema,
  verifySigningText,
  type NewSafTransaction,
  type SafRecord,
} from '../../runtime/index.js';
import { deviceSecrets } from '../auth/deviceSecrets.js';
import type { GatewayContext } from '../context.js';
import { route } from '../route.js';

/** Largest upload: a full batch of the largest records, with room for the envelope. */
export const SAF_BATCH_BODY_LIMIT = MAX_SAF_BATCH * (MAX_SAF_RECORD_BYTES + 1024) + 64 * 1024;

const batchBody = z.preprocess(
  (value) => (Array.isArray(value) ? { records: value } : value),
  z.strictObject({
    records: z
      .array(z.unknown().meta({ description: 'a signed transaction record (see the README)' }))
      .min(1)
      .max(MAX_SAF_BATCH),
  }),
);

const rejection = z.object({
  id: z.string().nullable(),
  index: z.number().int(),
  code: z.string(),
  message: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
type Rejection = z.output<typeof rejection>;

const batchResponse = z.object({
  synced_ids: z.array(z.string()),
  duplicates: z.array(z.string()),
  rejected: z.array(rejection),
  sequence_gaps: z.array(z.object({ from: z.number().int(), to: z.number().int() })).optional(),
});

const pathOf = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    '$',
  );

/** A record that passed the per-record checks. */
interface Verified {
  index: number;
  record: SafRecord;
  unsigned: Record<string, unknown>;
  content: string;
}

/** Check one record; a rejection or the verified record. */
function verify(
  raw: unknown,
  index: number,
  deviceId: string,
  secrets: readonly string[],
): Rejection | Verified {
  const idOf = (value: unknown) => {
    const id = (value as { workflow_id?: unknown } | null)?.workflow_id;
    return typeof id === 'string' && id.length <= 200 ? id : null;
  };
  const reject = (code: string, message: string, extra: Partial<Rejection> = {}): Rejection => ({
    id: idOf(raw),
    index,
    code,
    message,
    ...extra,
  });
  const pan = findClearPan(raw);
  if (pan)
    return {
      // not even the id: it could be where the number is
      id: pan.path === '$.workflow_id' ? null : idOf(raw),
      index,
      code: 'CARD_DATA_IN_CLEAR',
      message: `the record contains what looks like a card number in clear (${pan.inKey ? 'in a key of' : 'at'} ${pan.path}); send cards as token, last4 and encrypted_payload`,
    };
  const parsed = safRecordSchema.safeParse(raw);
  if (!parsed.success) {
    const errors = parsed.error.issues
      .slice(0, 20)
      .map((issue) => ({ path: pathOf(issue.path), message: issue.message }));
    return reject('INVALID_RECORD', errors.map((e) => `${e.path}: ${e.message}`).join('; '), {
      errors,
    });
  }
  const record = parsed.data;
  const { signature, ...unsigned } = raw as Record<string, unknown>;
  // the signing text (signature.ts recordSigningText), computed once for the size check and the signature
  const content = canonicalJson(unsigned);
  if (Buffer.byteLength(content) > MAX_SAF_RECORD_BYTES)
    return reject(
      'RECORD_TOO_LARGE',
      `a record is at most ${MAX_SAF_RECORD_BYTES} bytes of canonical JSON`,
    );
  if (record.device_id !== deviceId)
    return reject('DEVICE_MISMATCH', 'the record names another device than the one uploading it');
  if (!verifySigningText(secrets, content, signature))
    return reject('INVALID_SIGNATURE', 'the record signature does not verify with the device key');
  return { index, record, unsigned, content };
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
      response: batchResponse,
      bodyLimit: SAF_BATCH_BODY_LIMIT,
    },
    async ({ body, principal }) => {
      // users were refused by the route (no roles); this is a device
      const deviceId = principal.kind === 'device' ? principal.deviceId : '';
      const secrets = await deviceSecrets(ctx.store, ctx.keys, deviceId, ctx.now());
      const rejected: Rejection[] = [];
      const accepted: Verified[] = [];
      const byId = new Map<string, Verified>();
      const bySequence = new Map<number, Verified>();
      for (const [index, raw] of body.records.entries()) {
        const checked = verify(raw, index, deviceId, secrets);
        if (!('record' in checked)) {
          rejected.push(checked);
          continue;
        }
        const { workflow_id: id, device_sequence: sequence } = checked.record;
        const sameId = byId.get(id);
        if (sameId) {
          // an exact repeat is the same record; other content under the same id is not
          if (sameId.content !== checked.content)
            rejected.push({
              id,
              index,
              code: 'IDEMPOTENCY_CONFLICT',
              message: `workflow_id appears earlier in this batch (index ${sameId.index}) with other content`,
            });
          continue;
        }
        const sameSequence = bySequence.get(sequence);
        if (sameSequence) {
          rejected.push({
            id,
            index,
            code: 'SEQUENCE_CONFLICT',
            message: `device_sequence ${sequence} is used earlier in this batch (index ${sameSequence.index})`,
          });
          continue;
        }
        byId.set(id, checked);
        bySequence.set(sequence, checked);
        accepted.push(checked);
      }

      await applyDeviceEvent(ctx.store, deviceId, devEvents.syncStarted(), ctx.now());
      try {
        const result = await insertSafTransactions(
          ctx.store,
          deviceId,
          accepted.map(({ record, unsigned }): NewSafTransaction => ({
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
            record: unsigned,
            signature: record.signature,
            offlineCreatedAt: new Date(record.created_at),
          })),
          ctx.now(),
        );
        const synced: string[] = [];
        const duplicates: string[] = [];
        for (const { record, index } of accepted) {
          const outcome = result.outcomes.get(record.workflow_id);
          if (!outcome) continue;
          if (outcome.kind === 'rejected')
            rejected.push({
              id: record.workflow_id,
              index,
              code: outcome.code,
              message: outcome.message,
            });
          else {
            synced.push(record.workflow_id);
            if (outcome.kind === 'duplicate') duplicates.push(record.workflow_id);
          }
        }
        rejected.sort((a, b) => a.index - b.index);
        return {
          synced_ids: synced,
          duplicates,
          rejected,
          ...(result.gaps.length > 0 ? { sequence_gaps: result.gaps } : {}),
        };
      } finally {
        await applyDeviceEvent(ctx.store, deviceId, devEvents.syncFinished(), ctx.now());
      }
    },
  );
}
