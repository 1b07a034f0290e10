/**
 * `saffron schedules list | remove`: the cron registrations CRON_SCHEDULE steps made
 * (`scheduled_workflows`). A registration persists until it is removed (spec), so `remove`
 * is how an operator stops one from firing; a workflow that runs the step again registers it
 * again. They work on the engine database, where `run`, `start` and `worker` keep them.
 */
import type { Command } from 'commander';
import {
  deleteScheduledWorkflow,
  listScheduledWorkflows,
  SaffronError,
  type ScheduleListing,
  type Store,
} from '../../runtime/index.js';
import { engineAction } from '../engineAction.js';
import { openEngineStore } from '../engineStore.js';
import { type CliIo, printJson, printRows } from '../io.js';
import { databaseOptions, type DatabaseOptions } from '../storeOption.js';

interface ScheduleOptions extends DatabaseOptions {
  json?: boolean;
}

const time = (at: Date | null) => (at === null ? null : at.toISOString());

/** A schedule as JSON; keys are the table's column names. */
function scheduleJson(s: ScheduleListing): Record<string, unknown> {
  return {
    schedule_name: s.scheduleName,
    cron_expression: s.cronExpression,
    timezone: s.timezone,
    target_workflow_type: s.targetWorkflowType,
    initial_data_template: s.initialData,
    status: s.status,
    next_run_at: time(s.nextRunAt),
    last_run_at: time(s.lastRunAt),
    source_workflow_id: s.sourceWorkflowId,
    created_at: time(s.createdAt),
    updated_at: time(s.updatedAt),
  };
}

function printTable(io: CliIo, schedules: readonly ScheduleListing[]): void {
  if (schedules.length === 0) {
    io.stdout.write('no schedules\n');
    return;
  }
  const rows = [
    ['NAME', 'CRON', 'TARGET', 'NEXT RUN', 'LAST RUN', 'STATUS'],
    ...schedules.map((s) => [
      s.scheduleName,
      s.timezone === 'UTC' ? s.cronExpression : `${s.cronExpression} (${s.timezone})`,
      s.targetWorkflowType,
      time(s.nextRunAt) ?? '-',
      time(s.lastRunAt) ?? '-',
      s.status,
    ]),
  ];
  printRows(io, rows);
}

async function withEngineStore<T>(
  options: ScheduleOptions,
  io: CliIo,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openEngineStore(options, io, 2);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function list(options: ScheduleOptions, io: CliIo): Promise<void> {
  const schedules = await withEngineStore(options, io, (store) => listScheduledWorkflows(store));
  if (options.json) printJson(io, { schedules: schedules.map(scheduleJson) });
  else printTable(io, schedules);
}

async function remove(name: string, options: ScheduleOptions, io: CliIo): Promise<void> {
  const removed = await withEngineStore(options, io, (store) =>
    deleteScheduledWorkflow(store, name),
  );
  if (!removed)
    throw new SaffronError(
      'SCHEDULE_NOT_FOUND',
      `no schedule named '${name}' (\`saffron schedules list\` shows them)`,
      { details: { scheduleName: name } },
    );
  if (options.json) printJson(io, { ok: true, removed: name });
  else io.stdout.write(`removed schedule ${name}\n`);
}

/** Register `schedules list` and `schedules remove`. */
export function registerScheduleCommands(program: Command, io: CliIo): void {
  const schedules = program
    .command('schedules')
    .description('cron schedules registered by CRON_SCHEDULE steps');
  databaseOptions(
    schedules
      .command('list')
      .description('list schedules: name, cron, target workflow type, next and last run, status'),
  ).action(engineAction(io, (options: ScheduleOptions) => list(options, io)));
  databaseOptions(
    schedules
      .command('remove')
      .description('remove a schedule so it fires no more (it persists until removed)')
      .argument('<name>', 'schedule name'),
  ).action(engineAction(io, (name: string, options: ScheduleOptions) => remove(name, options, io)));
}
