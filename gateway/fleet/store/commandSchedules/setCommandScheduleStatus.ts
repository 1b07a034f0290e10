import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import {
  COMMAND_SCHEDULE_COLUMNS,
  rowToCommandSchedule,
  type CommandScheduleRecord,
} from './commandSchedule.js';

/** A status change an operator asks for. */
export interface CommandScheduleStatusChange {
  /** Statuses the schedule may be in for the change to apply. */
  from: readonly string[];
  to: 'ACTIVE' | 'PAUSED' | 'DELETED';
  /** The next run after the change (resume recomputes it; pause and delete clear it). */
  nextRunAt: Date | null;
  event: 'SCHEDULE_PAUSED' | 'SCHEDULE_RESUMED' | 'SCHEDULE_DELETED';
}

/**
 * Change a schedule's status if it is in one of `change.from` (compare-and-set, audited);
 * undefined when it is not (or does not exist). Call inside a transaction.
 */
export async function setCommandScheduleStatus(
  h: CloudHandle,
  scheduleId: string,
  change: CommandScheduleStatusChange,
  actor: CommandActor,
  now: Date,
): Promise<CommandScheduleRecord | undefined> {
  try {
    const row = await h.cloud
      .updateTable('command_schedules')
      .set({
        status: change.to,
        next_run_at: change.nextRunAt ? h.codec.time(change.nextRunAt) : null,
        updated_at: h.codec.time(now),
      })
      .where('schedule_id', '=', scheduleId)
      .where('status', 'in', change.from)
      .returning(COMMAND_SCHEDULE_COLUMNS)
      .executeTakeFirst();
    if (!row) return undefined;
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: change.event,
          details: {
            schedule_id: scheduleId,
            status: change.to,
            next_run_at: change.nextRunAt?.toISOString() ?? null,
          },
        },
      ],
      now,
    );
    return rowToCommandSchedule(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `set status of schedule ${scheduleId}`);
  }
}
