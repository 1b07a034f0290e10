import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { rowToSchedule, type StoredSchedule } from './upsertScheduledWorkflow.js';

/** ACTIVE schedules whose next run is due at `now`. */
export async function listDueSchedules(
  h: StoreHandle,
  now: Date,
  limit = 100,
): Promise<StoredSchedule[]> {
  try {
    const rows = await h.db
      .selectFrom('scheduled_workflows')
      .selectAll()
      .where('status', '=', 'ACTIVE')
      .where('next_run_at', '<=', h.codec.time(now))
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
    return rows.map((r) => rowToSchedule(h, r));
  } catch (error) {
    throw translateDriverError(error, 'list due schedules');
  }
}

/**
 * Move a schedule past the ticks just fired, if it is still where this node read it
 * (compare-and-set on next_run_at); false when another node moved it first.
 */
export async function advanceSchedule(
  h: StoreHandle,
  id: string,
  expected: Date,
  lastRun: Date,
  next: Date | null,
): Promise<boolean> {
  const r = await h.db
    .updateTable('scheduled_workflows')
    .set({
      next_run_at: next ? h.codec.time(next) : null,
      last_run_at: h.codec.time(lastRun),
      updated_at: h.codec.time(lastRun),
    })
    .where('id', '=', id)
    .where('next_run_at', '=', h.codec.time(expected))
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}
