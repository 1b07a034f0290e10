import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_SCHEDULE_COLUMNS,
  rowToCommandSchedule,
  type CommandScheduleRecord,
} from './commandSchedule.js';

/** Filters of {@link listCommandSchedules}. */
export interface CommandScheduleFilter {
  /** Only this status; without it, every status but DELETED. */
  status?: string;
  /** Page size (default 100, at most 500). */
  limit?: number;
}

/** Schedules, newest first. */
export async function listCommandSchedules(
  h: CloudHandle,
  filter: CommandScheduleFilter = {},
): Promise<CommandScheduleRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 500);
  let query = h.cloud.selectFrom('command_schedules').select(COMMAND_SCHEDULE_COLUMNS);
  query =
    filter.status !== undefined
      ? query.where('status', '=', filter.status)
      : query.where('status', '!=', 'DELETED');
  try {
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('schedule_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => rowToCommandSchedule(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list schedules');
  }
}

/** ACTIVE schedules whose next run is due at `now`, most overdue first. */
export async function listDueCommandSchedules(
  h: CloudHandle,
  now: Date,
  limit = 100,
): Promise<CommandScheduleRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('command_schedules')
      .select(COMMAND_SCHEDULE_COLUMNS)
      .where('status', '=', 'ACTIVE')
      .where('next_run_at', '<=', h.codec.time(now))
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
    return rows.map((row) => rowToCommandSchedule(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list due schedules');
  }
}
