import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_SCHEDULE_COLUMNS,
  rowToCommandSchedule,
  type CommandScheduleRecord,
} from './commandSchedule.js';

/** The schedule `scheduleId`, or undefined (DELETED ones too: their history stays readable). */
export async function getCommandSchedule(
  h: CloudHandle,
  scheduleId: string,
): Promise<CommandScheduleRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('command_schedules')
      .select(COMMAND_SCHEDULE_COLUMNS)
      .where('schedule_id', '=', scheduleId)
      .executeTakeFirst();
    return row ? rowToCommandSchedule(h.codec, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `get schedule ${scheduleId}`);
  }
}
