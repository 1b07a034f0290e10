import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** Where a schedule goes after a run (or a deferral). */
export interface ScheduleAdvance {
  /** The next run, or null when there is none. */
  nextRunAt: Date | null;
  /** ACTIVE, or COMPLETED after a one-time schedule's run. */
  status: 'ACTIVE' | 'COMPLETED';
  /** Set when a run fired (not on a deferral). */
  lastRunAt: Date | null;
}

/**
 * Claim the run of schedule `scheduleId` that is due at `expected`: move the schedule on
 * only if it is still ACTIVE with that `next_run_at` (compare-and-set). False when another
 * gateway claimed it first, or an operator paused or deleted it meanwhile. Call in the
 * transaction that performs the run, so a run that fails to commit is not lost.
 */
export async function claimScheduleRun(
  h: CloudHandle,
  scheduleId: string,
  expected: Date,
  advance: ScheduleAdvance,
  now: Date,
): Promise<boolean> {
  try {
    const result = await h.cloud
      .updateTable('command_schedules')
      .set({
        next_run_at: advance.nextRunAt ? h.codec.time(advance.nextRunAt) : null,
        status: advance.status,
        ...(advance.lastRunAt ? { last_run_at: h.codec.time(advance.lastRunAt) } : {}),
        updated_at: h.codec.time(now),
      })
      .where('schedule_id', '=', scheduleId)
      .where('status', '=', 'ACTIVE')
      .where('next_run_at', '=', h.codec.time(expected))
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  } catch (error) {
    throw translateDriverError(error, `claim run of schedule ${scheduleId}`);
  }
}
