/**
 * FIRE_AND_FORGET: spawn an independent workflow (no parent link, no status propagation) in
 * the same commit as this step; the parent keeps only the child's id, under
 * `spawned_workflows.<step name>`. The initial data template is rendered without secrets:
 * it is persisted as the child's state, and secrets never are.
 */
import type { FireAndForgetStep } from '../../definition/index.js';
import { toError } from '../../errors.js';
import type { JsonObject } from '../../model/json.js';
import { renderTemplate } from '../../template/index.js';
import { contextScope } from '../context.js';
import { StepError } from '../errors.js';
import type { StepResult, StepRun } from '../run.js';

/** Render a persisted template (no secrets) for `step`, or a failed result. */
export function renderPersisted(
  template: JsonObject,
  path: string,
  run: StepRun,
): { ok: true; value: JsonObject } | { ok: false; result: StepResult } {
  try {
    const value = renderTemplate(
      template,
      { state: run.state, context: contextScope(run.context) },
      { path },
    );
    return { ok: true, value: value as JsonObject };
  } catch (error) {
    return {
      ok: false,
      result: {
        kind: 'failed',
        error: new StepError('STEP_INPUT_INVALID', run.context.stepName, toError(error).message, {
          cause: error,
        }),
      },
    };
  }
}

/** Execute a FIRE_AND_FORGET step. */
export function executeFireAndForget(step: FireAndForgetStep, run: StepRun): StepResult {
  if (!run.knowsWorkflowType(step.target_workflow_type)) {
    return {
      kind: 'failed',
      error: new StepError(
        'STEP_INPUT_INVALID',
        step.name,
        `unknown target_workflow_type '${step.target_workflow_type}'`,
      ),
    };
  }
  const data = renderPersisted(step.initial_data_template, 'initial_data_template', run);
  if (!data.ok) return data.result;
  const id = run.ids.uuid();
  run.effects.children.push({
    id,
    workflowType: step.target_workflow_type,
    initialData: data.value,
    parent: false,
    stepName: step.name,
  });
  const spawned = (run.state.spawned_workflows as JsonObject | undefined) ?? {};
  return {
    kind: 'completed',
    state: { ...run.state, spawned_workflows: { ...spawned, [step.name]: id } },
  };
}
