import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Delete counters whose window ended before `now` (at most 10,000 per call); returns how
 * many went. Every gateway runs this now and then; concurrent runs are harmless.
 */
export async function purgeRateLimitTracking(h: CloudHandle, now: Date): Promise<number> {
  try {
    const result = await sql`
      DELETE FROM rate_limit_tracking WHERE ctid IN (
        SELECT t.ctid FROM rate_limit_tracking t JOIN rate_limit_rules r USING (rule_id)
        WHERE t.window_start + r.window_seconds * interval '1 second'
          < ${h.codec.time(now)}::timestamptz
        LIMIT 10000)`.execute(h.db);
    return Number(result.numAffectedRows ?? 0);
  } catch (error) {
    throw translateDriverError(error, 'purge rate-limit counters');
  }
}
