/**
 * Calendar arithmetic of command schedules, in the schedule's IANA time zone: the next cron
 * tick (croner), and maintenance windows — a daily time range (`HH:MM`–`HH:MM`, local time,
 * optionally only on some weekdays) outside of which a schedule does not fire but defers to
 * the window's next opening. A window whose end is not after its start runs past midnight
 * (22:00–04:00); `days` name the day it opens. Everything here is pure and takes the time
 * as an argument, so the scheduler's clock can be injected.
 */
import { Cron } from 'croner';

/** Weekday names, Sunday first (as cron numbers them). */
export const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
/** A weekday name. */
export type Weekday = (typeof WEEKDAYS)[number];

/** A daily maintenance window in the schedule's time zone. */
export interface MaintenanceWindow {
  /** Days the window opens (default: every day). */
  days?: Weekday[];
  /** Opening time, `HH:MM` (24 h). */
  start: string;
  /** Closing time, `HH:MM`; at or before `start`, the window closes the next day. */
  end: string;
}

/** True when `timeZone` is an IANA zone this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The cron expression's problem, or undefined when it parses. */
export function cronProblem(expression: string, timeZone: string): string | undefined {
  try {
    new Cron(expression, { paused: true, timezone: timeZone }).stop();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The first tick of `expression` in `timeZone` strictly after `after`, or null. */
export function nextCronTick(expression: string, timeZone: string, after: Date): Date | null {
  const cron = new Cron(expression, { paused: true, timezone: timeZone });
  try {
    return cron.nextRun(after);
  } finally {
    cron.stop();
  }
}

/** Cron ticks strictly after `from` and at or before `to`, counted up to `cap`. */
export function countCronTicks(
  expression: string,
  timeZone: string,
  from: Date,
  to: Date,
  cap = 1000,
): number {
  const cron = new Cron(expression, { paused: true, timezone: timeZone });
  try {
    let n = 0;
    let tick = cron.nextRun(from);
    while (tick && tick.getTime() <= to.getTime() && n < cap) {
      n++;
      tick = cron.nextRun(tick);
    }
    return n;
  } finally {
    cron.stop();
  }
}

const minutesOf = (hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

function localDayAndMinute(at: Date, timeZone: string): { day: number; minute: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = WEEKDAYS.indexOf(get('weekday').toUpperCase() as Weekday);
  return { day, minute: Number(get('hour')) * 60 + Number(get('minute')) };
}

/** True when `at` falls inside `window` in `timeZone`. */
export function insideWindow(at: Date, window: MaintenanceWindow, timeZone: string): boolean {
  const { day, minute } = localDayAndMinute(at, timeZone);
  const opens = (d: number) => !window.days || window.days.includes(WEEKDAYS[(d + 7) % 7]!);
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  if (start < end) return opens(day) && minute >= start && minute < end;
  return (opens(day) && minute >= start) || (opens(day - 1) && minute < end);
}

/** The window's next opening strictly after `after`, or null when it never opens. */
export function nextWindowOpening(
  after: Date,
  window: MaintenanceWindow,
  timeZone: string,
): Date | null {
  const [h, m] = window.start.split(':').map(Number);
  const days = window.days?.length ? window.days.map((d) => WEEKDAYS.indexOf(d)).join(',') : '*';
  return nextCronTick(`${m} ${h} * * ${days}`, timeZone, after);
}
