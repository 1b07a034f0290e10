/**
 * HTTP: one attempt per execution. A retryable failure with attempts left becomes a `retry`
 * result with a due time: the engine records it durably and runs the step again when due,
 * so a restart in between neither loses nor shortens the delay.
 */
import type { HttpStep } from '../../definition/index.js';
import { attemptHttpStep } from '../../http/index.js';
import { contextScope } from '../context.js';
import type { StepResult, StepRun } from '../run.js';

/** Execute one attempt of an HTTP step. */
export async function executeHttp(step: HttpStep, run: StepRun): Promise<StepResult> {
  const result = await attemptHttpStep(
    step,
    { state: run.state, context: contextScope(run.context) },
    { secrets: run.secrets, destinations: run.destinations, signal: run.context.signal },
  );
  if (result.ok) {
    run.context.log.info(`${step.http_config.method} answered ${result.statusCode}`, {
      status_code: result.statusCode,
      duration_ms: Math.round(result.durationMs),
    });
    return { kind: 'completed', state: { ...run.state, [step.output_key]: result.output } };
  }
  const attempt = run.attempt + 1;
  run.context.log.warn(
    `attempt ${attempt} of ${step.http_config.retry_policy.max_attempts} failed: ${result.error.message}`,
    { code: result.error.code },
  );
  if (result.retryable && attempt < step.http_config.retry_policy.max_attempts) {
    const dueAt = new Date(
      run.clock.now().getTime() + step.http_config.retry_policy.delay_seconds * 1000,
    );
    return { kind: 'retry', state: run.state, dueAt, attempt, error: result.error };
  }
  return { kind: 'failed', error: result.error };
}
