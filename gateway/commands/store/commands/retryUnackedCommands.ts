/**
 * The ack timeout: a command DELIVERED before `deliveredBefore` and still not acked goes
 * back to PENDING with `retry_count + 1` and `next_attempt_at = now + backoff`, or — when
 * its retries are used up — to FAILED (`max retries exceeded`). Backoff is exponential with
 * "equal jitter": half of `min(maxMs, baseMs · 2^retry_count)` fixed, half random, so
 * devices that dropped off together do not come back in lockstep. At most `limit` per call,
 * FOR UPDATE SKIP LOCKED, audited, one transaction. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore } from '../../../../runtime/index.js';
import { appendCommandAudit } from './appendCommandAudit.js';
import { MAX_RETRIES_ERROR, type CommandActor } from './command.js';

/** Backoff of retries. */
export interface RetryBackoff {
  baseMs: number;
  maxMs: number;
}

/** A command the ack timeout changed. */
export interface RetriedCommand {
  commandId: string;
  deviceId: string;
  status: 'PENDING' | 'FAILED';
  retryCount: number;
  nextAttemptAt: Date | null;
}

/** Apply the ack timeout at `now`; returns the commands changed. */
export async function retryUnackedCommands(
  store: CloudStore,
  options: { deliveredBefore: Date; backoff: RetryBackoff; actor: CommandActor; limit?: number },
  now: Date,
): Promise<RetriedCommand[]> {
  try {
    return await store.transaction(async (tx) => {
      const at = tx.codec.time(now);
      const before = tx.codec.time(options.deliveredBefore);
      const { baseMs, maxMs } = options.backoff;
      const result = await sql<{
        command_id: string;
        device_id: string;
        status: 'PENDING' | 'FAILED';
        retry_count: number | string;
        next_attempt_at: unknown;
      }>`
        WITH due AS (
          SELECT command_id FROM device_commands
          WHERE status = 'DELIVERED' AND delivered_at <= ${before}::timestamptz
          ORDER BY delivered_at
          LIMIT ${options.limit ?? 1000}
          FOR UPDATE SKIP LOCKED)
        UPDATE device_commands AS c SET
          status = CASE WHEN c.retry_count < c.max_retries THEN 'PENDING' ELSE 'FAILED' END,
          retry_count = CASE WHEN c.retry_count < c.max_retries THEN c.retry_count + 1 ELSE c.retry_count END,
          next_attempt_at = CASE WHEN c.retry_count < c.max_retries
            THEN ${at}::timestamptz + make_interval(secs =>
              least(${maxMs}::float8, ${baseMs}::float8 * power(2, c.retry_count)) * (0.5 + random() * 0.5) / 1000.0)
            ELSE c.next_attempt_at END,
          delivered_at = CASE WHEN c.retry_count < c.max_retries THEN NULL ELSE c.delivered_at END,
          error = CASE WHEN c.retry_count < c.max_retries THEN c.error ELSE ${MAX_RETRIES_ERROR} END
        FROM due WHERE c.command_id = due.command_id
        RETURNING c.command_id, c.device_id, c.status, c.retry_count, c.next_attempt_at`.execute(
        tx.db,
      );
      const changed: RetriedCommand[] = result.rows.map((r) => ({
        commandId: r.command_id,
        deviceId: r.device_id,
        status: r.status,
        retryCount: tx.codec.parseInt(r.retry_count),
        nextAttemptAt: r.next_attempt_at === null ? null : tx.codec.parseTime(r.next_attempt_at),
      }));
      await appendCommandAudit(
        tx,
        options.actor,
        changed.map((c) =>
          c.status === 'PENDING'
            ? {
                event: 'COMMAND_RETRIED' as const,
                deviceId: c.deviceId,
                commandId: c.commandId,
                details: {
                  reason: 'ack timeout',
                  retry_count: c.retryCount,
                  next_attempt_at: c.nextAttemptAt?.toISOString() ?? null,
                },
              }
            : {
                event: 'COMMAND_FAILED' as const,
                deviceId: c.deviceId,
                commandId: c.commandId,
                details: { reason: MAX_RETRIES_ERROR, retry_count: c.retryCount },
              },
        ),
        now,
      );
      return changed;
    });
  } catch (error) {
    throw translateDriverError(error, 'retry unacked commands');
  }
}
