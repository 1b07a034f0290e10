import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Devices with a PENDING, unexpired command whose retry became due in `(since, now]` — the
 * ones to wake so the gateway holding their socket pushes the retry. At most `limit`.
 */
export async function listNewlyDueDevices(
  h: CloudHandle,
  since: Date,
  now: Date,
  limit = 1000,
): Promise<string[]> {
  try {
    const at = h.codec.time(now);
    const result = await sql<{ device_id: string }>`
      SELECT DISTINCT device_id FROM device_commands
      WHERE status = 'PENDING'
        AND next_attempt_at > ${h.codec.time(since)}::timestamptz
        AND next_attempt_at <= ${at}::timestamptz
        AND (expires_at IS NULL OR expires_at > ${at}::timestamptz)
      LIMIT ${limit}`.execute(h.db);
    return result.rows.map((r) => r.device_id);
  } catch (error) {
    throw translateDriverError(error, 'list devices with newly due commands');
  }
}
