/**
 * Store-and-forward limits: how much a device may approve offline before it must reach the
 * cloud again (the floor-limit pattern caps one payment; these cap the sum, the count and
 * the age of what waits for upload — the risk a merchant carries while a terminal is cut
 * off). The cloud publishes them in the device configuration (any configuration layer:
 * `PUT /api/v1/config/{scope}/{scope_key}`), under `store_and_forward`:
 *
 * ```json
 * { "store_and_forward": {
 *     "max_unsent_amount_minor": 50000,   // sum of |amount_minor| of PENDING records + the new one
 *     "max_records": 200,                 // PENDING records, the new one included
 *     "max_age_seconds": 86400 } }        // age of the oldest PENDING record
 * ```
 *
 * Every key is optional (absent = no limit); all are integers ≥ 0 (`max_age_seconds` ≥ 1);
 * an unknown key inside the section is an error — a misspelt limit must not silently become
 * no limit. The agent runs {@link safLimitsFromConfig} as its configuration sync's
 * `validate` step, so a malformed section is refused with the rest of the document and the
 * last good limits stay in force.
 * Amounts are in minor units and not converted: a device is expected to take one currency.
 */
import { z } from 'zod';
import type { JsonObject } from '../../runtime/index.js';
import { SafError } from './errors.js';
import type { SafBacklog } from './readSafBacklog.js';

/** The limits a device applies before it approves another payment offline. */
export interface SafLimits {
  /** Largest sum of absolute `amount_minor` of PENDING records, the new payment included. */
  maxUnsentAmountMinor?: number;
  /** Most PENDING records, the new one included. */
  maxRecords?: number;
  /** Oldest a PENDING record may be, in seconds. */
  maxAgeSeconds?: number;
}

/** Codes of a refused offline payment. */
export type SafLimitCode = 'SAF_AMOUNT_LIMIT' | 'SAF_COUNT_LIMIT' | 'SAF_AGE_LIMIT';

/** Whether one more offline payment fits within the limits. */
export type SafLimitVerdict = { ok: true } | { ok: false; code: SafLimitCode; message: string };

/** The payment about to be approved offline (amount unknown: null). */
export interface SafLimitRequest {
  amountMinor: number | null;
  currency: string | null;
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Schema of the `store_and_forward` section of the device configuration. */
export const safLimitsConfigSchema = z.strictObject({
  max_unsent_amount_minor: count.optional(),
  max_records: count.optional(),
  max_age_seconds: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});

const pathOf = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    '$.store_and_forward',
  );

/**
 * The limits in a device configuration's content (the merged `config` object); `{}` when it
 * has no `store_and_forward` section. Throws SAF_LIMITS_INVALID (with `details.issues`)
 * when the section is malformed.
 */
export function safLimitsFromConfig(config: JsonObject): SafLimits {
  const section = config.store_and_forward;
  if (section === undefined || section === null) return {};
  const parsed = safLimitsConfigSchema.safeParse(section);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: pathOf(i.path), message: i.message }));
    throw new SafError(
      'SAF_LIMITS_INVALID',
      `store_and_forward limits are invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path}: ${i.message}`)
        .join('; ')}`,
      { details: { issues } },
    );
  }
  const limits: SafLimits = {};
  const p = parsed.data;
  if (p.max_unsent_amount_minor !== undefined)
    limits.maxUnsentAmountMinor = p.max_unsent_amount_minor;
  if (p.max_records !== undefined) limits.maxRecords = p.max_records;
  if (p.max_age_seconds !== undefined) limits.maxAgeSeconds = p.max_age_seconds;
  return limits;
}

/** Whether `limits` sets any limit. */
export const hasSafLimits = (limits: SafLimits): boolean =>
  limits.maxUnsentAmountMinor !== undefined ||
  limits.maxRecords !== undefined ||
  limits.maxAgeSeconds !== undefined;

/**
 * The verdict on one more offline payment, given the backlog. Checked in this order:
 * amount, count, age. A payment whose amount is unknown is refused on amount only when the
 * backlog alone has reached the limit.
 */
export function evaluateSafLimits(
  backlog: SafBacklog,
  request: SafLimitRequest,
  limits: SafLimits,
  now: Date,
): SafLimitVerdict {
  const { maxUnsentAmountMinor: maxAmount, maxRecords, maxAgeSeconds } = limits;
  if (maxAmount !== undefined) {
    const amount = request.amountMinor === null ? 0 : Math.abs(request.amountMinor);
    const projected = backlog.exposureMinor + amount;
    const over =
      request.amountMinor === null ? backlog.exposureMinor >= maxAmount : projected > maxAmount;
    if (over)
      return {
        ok: false,
        code: 'SAF_AMOUNT_LIMIT',
        message: `offline amount limit reached: ${backlog.exposureMinor} minor units wait for upload${
          request.amountMinor === null ? '' : `, ${amount} more would make ${projected}`
        }; the limit is ${maxAmount}`,
      };
  }
  if (maxRecords !== undefined && backlog.count + 1 > maxRecords)
    return {
      ok: false,
      code: 'SAF_COUNT_LIMIT',
      message: `offline record limit reached: ${backlog.count} records wait for upload; the limit is ${maxRecords}`,
    };
  if (maxAgeSeconds !== undefined && backlog.oldestCreatedAt !== null) {
    const ageSeconds = Math.floor((now.getTime() - Date.parse(backlog.oldestCreatedAt)) / 1000);
    if (ageSeconds > maxAgeSeconds)
      return {
        ok: false,
        code: 'SAF_AGE_LIMIT',
        message: `offline age limit reached: the oldest record waiting for upload is ${ageSeconds} s old; the limit is ${maxAgeSeconds} s`,
      };
  }
  return { ok: true };
}
