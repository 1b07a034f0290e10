/**
 * The command schedule record as operations return it: a one-time (`ONCE`, `run_at`) or
 * cron (`CRON`, `cron_expression` in `timezone`) trigger for a command, a template
 * application or a broadcast, optionally confined to a maintenance window. `next_run_at` is
 * the scheduler's cursor: firing a run moves it with a compare-and-set, which is what makes
 * a tick fire once however many gateways run the scheduler. Every run (and every deferral)
 * is a schedule_executions row. Cloud tier only; shapes of `target` and
 * `maintenance_window` are owned by the gateway (gateway/fleet).
 *
 * | from           | event                          | to        |
 * |----------------|--------------------------------|-----------|
 * | ACTIVE         | a CRON tick fires              | ACTIVE    |
 * | ACTIVE         | the ONCE run fires             | COMPLETED |
 * | ACTIVE         | pause                          | PAUSED    |
 * | PAUSED         | resume (next run recomputed)   | ACTIVE    |
 * | any but DELETED| delete                         | DELETED   |
 */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a schedule read returns. */
export const COMMAND_SCHEDULE_COLUMNS = [
  'schedule_id',
  'name',
  'schedule_type',
  'cron_expression',
  'run_at',
  'timezone',
  'target_kind',
  'target',
  'maintenance_window',
  'status',
  'next_run_at',
  'last_run_at',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** A command schedule. */
export interface CommandScheduleRecord {
  scheduleId: string;
  name: string;
  scheduleType: 'ONCE' | 'CRON';
  cronExpression: string | null;
  runAt: Date | null;
  timezone: string;
  targetKind: 'COMMAND' | 'TEMPLATE' | 'BROADCAST';
  target: unknown;
  maintenanceWindow: unknown;
  status: string;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A schedule row as selected with {@link COMMAND_SCHEDULE_COLUMNS}. */
export interface CommandScheduleRow {
  schedule_id: string;
  name: string;
  schedule_type: string;
  cron_expression: string | null;
  run_at: unknown;
  timezone: string;
  target_kind: string;
  target: unknown;
  maintenance_window: unknown;
  status: string;
  next_run_at: unknown;
  last_run_at: unknown;
  created_by: string | null;
  created_at: unknown;
  updated_at: unknown;
}

const time = (codec: Codec, raw: unknown) =>
  raw === null || raw === undefined ? null : codec.parseTime(raw);

/** Decode a schedule row. */
export function rowToCommandSchedule(codec: Codec, row: CommandScheduleRow): CommandScheduleRecord {
  return {
    scheduleId: row.schedule_id,
    name: row.name,
    scheduleType: row.schedule_type === 'CRON' ? 'CRON' : 'ONCE',
    cronExpression: row.cron_expression,
    runAt: time(codec, row.run_at),
    timezone: row.timezone,
    targetKind:
      row.target_kind === 'TEMPLATE'
        ? 'TEMPLATE'
        : row.target_kind === 'BROADCAST'
          ? 'BROADCAST'
          : 'COMMAND',
    target: codec.parseJson(row.target),
    maintenanceWindow:
      row.maintenance_window === null ? null : codec.parseJson(row.maintenance_window),
    status: row.status,
    nextRunAt: time(codec, row.next_run_at),
    lastRunAt: time(codec, row.last_run_at),
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}
