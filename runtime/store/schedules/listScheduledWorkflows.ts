import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { rowToSchedule, type StoredSchedule } from './upsertScheduledWorkflow.js';

/** A schedule as an operator sees it: the registration and when it last and next fires. */
export interface ScheduleListing extends StoredSchedule {
  timezone: string;
  lastRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Every schedule, by name. */
export async function listScheduledWorkflows(h: StoreHandle): Promise<ScheduleListing[]> {
  try {
    const rows = await h.db
      .selectFrom('scheduled_workflows')
      .selectAll()
      .orderBy('schedule_name')
      .execute();
    return rows.map((r) => ({
      ...rowToSchedule(h, r),
      timezone: r.timezone,
      lastRunAt: r.last_run_at === null ? null : h.codec.parseTime(r.last_run_at),
      createdAt: h.codec.parseTime(r.created_at),
      updatedAt: h.codec.parseTime(r.updated_at),
    }));
  } catch (error) {
    throw translateDriverError(error, 'list schedules');
  }
}
