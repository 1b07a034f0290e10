/**
 * DECISION: the function runs first; then routes are evaluated in order against the new
 * state and the first matching condition wins, `default` being the fallback (spec). With no
 * routes the function must jump; a DECISION that ends without a target fails the step with a
 * clear error instead of silently falling through.
 */
import type { DecisionStep } from '../../definition/index.js';
import { toError } from '../../errors.js';
import { compileExpression, isTruthy } from '../../expression/index.js';
import { contextScope } from '../context.js';
import { StepError } from '../errors.js';
import { invokeStepFunction } from '../invoke.js';
import type { StepResult, StepRun } from '../run.js';
import { directiveResult } from './functionStep.js';

/** Execute a DECISION step. */
export async function executeDecision(step: DecisionStep, run: StepRun): Promise<StepResult> {
  const result = await invokeStepFunction(run.executor, step.function, run.state, run.context);
  if (result.kind === 'threw') return { kind: 'failed', error: result.error };
  if (result.kind === 'directive') return directiveResult(result.directive, result.state, run);
  const routes = step.routes ?? [];
  if (routes.length === 0) {
    return {
      kind: 'failed',
      error: new StepError(
        'DECISION_NO_ROUTE',
        step.name,
        `DECISION ${step.name} has no routes and its function raised no WorkflowJumpDirective`,
      ),
    };
  }
  const scope = { state: result.state, context: contextScope(run.context) };
  for (const route of routes) {
    if ('default' in route) return { kind: 'jumped', target: route.default, state: result.state };
    try {
      if (isTruthy(compileExpression(route.condition)(scope)))
        return { kind: 'jumped', target: route.target, state: result.state };
    } catch (error) {
      return {
        kind: 'failed',
        error: new StepError(
          'DECISION_NO_ROUTE',
          step.name,
          `route condition '${route.condition}' failed: ${toError(error).message}`,
          { cause: error },
        ),
      };
    }
  }
  return {
    kind: 'failed',
    error: new StepError(
      'DECISION_NO_ROUTE',
      step.name,
      `no route of DECISION ${step.name} matched and it has no default`,
    ),
  };
}
