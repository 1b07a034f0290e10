/**
 * The shared counter of one rule, subject and fixed window: `reserveRateLimit` adds
 * `amount` to it in one atomic upsert (PostgreSQL serializes upserts of one key on its row
 * lock) and returns the new total. Because the increment is always exactly `amount`, the
 * total before it is `total - amount`, so the caller knows precisely which slice of the
 * window's budget it got — without a read-modify-write race between gateways. The counter
 * may pass the limit for a moment (an over-limit reservation adds, then returns what it was
 * not granted: `returnRateLimit`); only the slice below the limit is ever granted, so a
 * racing reservation that sees the moment is refused, never over-granted. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** Add `amount` to the counter; its new total, or undefined when the rule no longer exists. */
export async function reserveRateLimit(
  h: CloudHandle,
  key: { ruleId: string; subjectKey: string; windowStart: Date },
  amount: number,
  now: Date,
): Promise<number | undefined> {
  try {
    const result = await sql<{ request_count: number | string }>`
      INSERT INTO rate_limit_tracking (rule_id, subject_key, window_start, request_count,
        updated_at)
      VALUES (${key.ruleId}::uuid, ${key.subjectKey}, ${h.codec.time(key.windowStart)}::timestamptz,
        ${amount}, ${h.codec.time(now)}::timestamptz)
      ON CONFLICT (rule_id, subject_key, window_start) DO UPDATE
        SET request_count = rate_limit_tracking.request_count + EXCLUDED.request_count,
          updated_at = EXCLUDED.updated_at
      RETURNING request_count`.execute(h.db);
    return h.codec.parseInt(result.rows[0]!.request_count);
  } catch (error) {
    // the rule was deleted (by another gateway) after this one read it
    if ((error as { code?: unknown }).code === '23503') return undefined;
    throw translateDriverError(error, 'reserve rate-limit budget');
  }
}

/**
 * Give back `amount` of a reservation that was not granted (the part above the limit), so
 * the counter holds what was granted: refused requests do not use up budget that a raised
 * limit would otherwise offer. Never below zero.
 */
export async function returnRateLimit(
  h: CloudHandle,
  key: { ruleId: string; subjectKey: string; windowStart: Date },
  amount: number,
  now: Date,
): Promise<void> {
  if (amount <= 0) return;
  try {
    await h.cloud
      .updateTable('rate_limit_tracking')
      .set((eb) => ({
        request_count: sql<number>`GREATEST(${eb.ref('request_count')} - ${amount}, 0)`,
        updated_at: h.codec.time(now),
      }))
      .where('rule_id', '=', key.ruleId)
      .where('subject_key', '=', key.subjectKey)
      .where('window_start', '=', h.codec.time(key.windowStart))
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'return rate-limit budget');
  }
}

/** The counters of rule `ruleId` in the window starting at `windowStart`, largest first. */
export async function listRateLimitUsage(
  h: CloudHandle,
  ruleId: string,
  windowStart: Date,
  limit = 100,
): Promise<{ subjectKey: string; count: number }[]> {
  try {
    const rows = await h.cloud
      .selectFrom('rate_limit_tracking')
      .select(['subject_key', 'request_count'])
      .where('rule_id', '=', ruleId)
      .where('window_start', '=', h.codec.time(windowStart))
      .orderBy('request_count', 'desc')
      .orderBy('subject_key')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      subjectKey: r.subject_key,
      count: h.codec.parseInt(r.request_count),
    }));
  } catch (error) {
    throw translateDriverError(error, `read the usage of rate-limit rule ${ruleId}`);
  }
}
