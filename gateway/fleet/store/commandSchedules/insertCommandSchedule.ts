import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import {
  COMMAND_SCHEDULE_COLUMNS,
  rowToCommandSchedule,
  type CommandScheduleRecord,
} from './commandSchedule.js';

/** A schedule to create (ACTIVE). */
export interface NewCommandSchedule {
  scheduleId: string;
  name: string;
  scheduleType: 'ONCE' | 'CRON';
  cronExpression: string | null;
  runAt: Date | null;
  timezone: string;
  targetKind: 'COMMAND' | 'TEMPLATE' | 'BROADCAST';
  target: unknown;
  maintenanceWindow: unknown;
  /** The first run (the run time, or the first cron tick after now). */
  nextRunAt: Date | null;
}

/** Insert an ACTIVE schedule with its SCHEDULE_CREATED audit row; call inside a transaction. */
export async function insertCommandSchedule(
  h: CloudHandle,
  schedule: NewCommandSchedule,
  actor: CommandActor,
  now: Date,
): Promise<CommandScheduleRecord> {
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .insertInto('command_schedules')
      .values({
        schedule_id: schedule.scheduleId,
        name: schedule.name,
        schedule_type: schedule.scheduleType,
        cron_expression: schedule.cronExpression,
        run_at: schedule.runAt ? h.codec.time(schedule.runAt) : null,
        timezone: schedule.timezone,
        target_kind: schedule.targetKind,
        target: h.codec.json(schedule.target),
        maintenance_window:
          schedule.maintenanceWindow === null ? null : h.codec.json(schedule.maintenanceWindow),
        status: 'ACTIVE',
        next_run_at: schedule.nextRunAt ? h.codec.time(schedule.nextRunAt) : null,
        created_by: actor.actor,
        created_at: at,
        updated_at: at,
      })
      .returning(COMMAND_SCHEDULE_COLUMNS)
      .executeTakeFirstOrThrow();
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'SCHEDULE_CREATED',
          details: {
            schedule_id: schedule.scheduleId,
            name: schedule.name,
            schedule_type: schedule.scheduleType,
            target_kind: schedule.targetKind,
            next_run_at: schedule.nextRunAt?.toISOString() ?? null,
          },
        },
      ],
      now,
    );
    return rowToCommandSchedule(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create schedule ${schedule.name}`);
  }
}
