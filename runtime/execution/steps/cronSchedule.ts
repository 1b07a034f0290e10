/**
 * CRON_SCHEDULE: register (or update, by its unique name) a row in scheduled_workflows in
 * the step's commit. The cluster scheduler fires it at each cron time until it is removed.
 */
import { Cron } from 'croner';
import type { CronScheduleStep } from '../../definition/index.js';
import { toError } from '../../errors.js';
import { StepError } from '../errors.js';
import type { StepResult, StepRun } from '../run.js';
import { renderPersisted } from './fireAndForget.js';

/** The next time `expression` fires after `from`, in UTC. */
export function nextCronRun(expression: string, from: Date): Date | null {
  const cron = new Cron(expression, { paused: true, timezone: 'UTC' });
  try {
    return cron.nextRun(from);
  } finally {
    cron.stop();
  }
}

/** Execute a CRON_SCHEDULE step. */
export function executeCronSchedule(step: CronScheduleStep, run: StepRun): StepResult {
  const rendered = renderPersisted(
    { schedule_name: step.schedule_name, data: step.initial_data_template },
    'schedule',
    run,
  );
  if (!rendered.ok) return rendered.result;
  const name = rendered.value.schedule_name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
    return {
      kind: 'failed',
      error: new StepError(
        'STEP_INPUT_INVALID',
        step.name,
        'schedule_name must render to a non-empty string of at most 200 characters',
      ),
    };
  }
  let nextRunAt: Date | null;
  try {
    nextRunAt = nextCronRun(step.cron_expression, run.clock.now());
  } catch (error) {
    return {
      kind: 'failed',
      error: new StepError(
        'STEP_INPUT_INVALID',
        step.name,
        `cron_expression: ${toError(error).message}`,
        { cause: error },
      ),
    };
  }
  run.effects.schedules.push({
    scheduleName: name,
    cronExpression: step.cron_expression,
    targetWorkflowType: step.target_workflow_type,
    initialData: rendered.value.data as Record<string, unknown>,
    nextRunAt,
  });
  return { kind: 'completed', state: run.state };
}
