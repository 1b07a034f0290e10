/**
 * The store-and-forward transaction record: what an edge device writes when it completes a
 * workflow offline and uploads later (docs/architecture.md#cloud-and-edge, spec: POST /api/v1/transactions/batch).
 *
 * | field              | type                                   | note                                   |
 * |--------------------|----------------------------------------|----------------------------------------|
 * | workflow_id        | UUID                                   | the idempotency key                    |
 * | device_id          | string (1–100, `[A-Za-z0-9._:-]`)      | must be the uploading device           |
 * | workflow_type      | string (1–200)                         |                                        |
 * | workflow_version   | string (1–50), optional                |                                        |
 * | device_sequence    | integer ≥ 1                            | per-device, unique, gaps are reported  |
 * | amount_minor       | integer, optional                      | minor units; needs `currency`          |
 * | currency           | ISO 4217 code (`[A-Z]{3}`), optional   |                                        |
 * | card               | object, optional                       | `token`, `last4`, `encrypted_payload`  |
 * | final_state        | JSON object                            | the workflow's state, no secrets       |
 * | created_at         | RFC 3339 time                          | workflow start on the device           |
 * | completed_at       | RFC 3339 time                          | workflow end on the device             |
 * | signature          | base64url HMAC-SHA256 (43 characters)  | see signature.ts                       |
 *
 * `card.encrypted_payload` is the device's AES-256-GCM blob, base64 of
 * `iv (12 bytes) | tag (16 bytes) | ciphertext`; the cloud stores it and cannot read it.
 * Every object is strict: an unknown member is an error, so nothing the signature covers is
 * silently dropped. A record's canonical JSON may not exceed {@link MAX_SAF_RECORD_BYTES}.
 */
import { z } from 'zod';

/** Most records in one upload. */
export const MAX_SAF_BATCH = 500;
/** Largest record (canonical JSON, UTF-8 bytes). */
export const MAX_SAF_RECORD_BYTES = 16 * 1024;

const base64 = z
  .string()
  .max(8192)
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, 'must be base64')
  // iv (12) + tag (16) + at least one byte of ciphertext
  .refine((value) => Buffer.byteLength(value, 'base64') >= 29, {
    message: 'too short for an AES-256-GCM blob (iv | tag | ciphertext)',
  });

const time = z.iso.datetime({ offset: true });

/** The card part of a record: never the number itself. */
export const safCardSchema = z.strictObject({
  token: z.string().min(1).max(200),
  last4: z.string().regex(/^\d{4}$/, 'must be four digits'),
  encrypted_payload: base64,
});

/** A transaction record as uploaded (signature included). */
export const safRecordSchema = z
  .strictObject({
    workflow_id: z.uuid(),
    device_id: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9._:-]+$/, 'must be a device id'),
    workflow_type: z.string().min(1).max(200),
    workflow_version: z.string().min(1).max(50).optional(),
    device_sequence: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    amount_minor: z
      .number()
      .int()
      .min(-Number.MAX_SAFE_INTEGER)
      .max(Number.MAX_SAFE_INTEGER)
      .optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')
      .optional(),
    card: safCardSchema.optional(),
    final_state: z.record(z.string(), z.unknown()),
    created_at: time,
    completed_at: time,
    signature: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url HMAC-SHA256'),
  })
  .refine((record) => record.amount_minor === undefined || record.currency !== undefined, {
    message: 'an amount needs a currency',
    path: ['currency'],
  });

/** A transaction record. */
export type SafRecord = z.output<typeof safRecordSchema>;
