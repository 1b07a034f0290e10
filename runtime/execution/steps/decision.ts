/**
 * DECISION: the function runs first; then routes are evaluated in order against the new
 * state and the first matching condition wins, `default` being the fallback (spec). With no
 * routes the function must jump; a DECISION that ends without a target fails the step with a
 * clear error instead of silently falling through.
 *
 * A condition over a path that is not there reads null and is usually false; the paths that
 * were missing while the route was chosen go with the jump into its audit row
 * (`missing_paths`), so a gate skipped for want of a value leaves a trace. A condition that
 * orders values of different types fails the step with EXPRESSION_TYPE_MISMATCH.
 */
import type { DecisionStep } from '../../definition/index.js';
import { toError } from '../../errors.js';
import {
  compileExpression,
  ExpressionTypeError,
  isTruthy,
  type EvaluationTrace,
} from '../../expression/index.js';
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
  const trace: EvaluationTrace = { missingPaths: [] };
  const jump = (target: string): StepResult => ({
    kind: 'jumped',
    target,
    state: result.state,
    ...(trace.missingPaths.length > 0 && { missingPaths: trace.missingPaths }),
  });
  for (const route of routes) {
    if ('default' in route) return jump(route.default);
    try {
      if (isTruthy(compileExpression(route.condition)(scope, trace))) return jump(route.target);
    } catch (error) {
      return { kind: 'failed', error: conditionFailure(step, route.condition, error) };
    }
  }
  const missing = trace.missingPaths;
  return {
    kind: 'failed',
    error: new StepError(
      'DECISION_NO_ROUTE',
      step.name,
      `no route of DECISION ${step.name} matched and it has no default` +
        (missing.length > 0 ? ` (missing: ${missing.join(', ')})` : ''),
      { details: missing.length > 0 ? { missing_paths: missing } : {} },
    ),
  };
}

/** The step error of a route condition that could not be evaluated. */
function conditionFailure(step: DecisionStep, condition: string, error: unknown): StepError {
  const message = `route condition '${condition}' failed: ${toError(error).message}`;
  if (error instanceof ExpressionTypeError)
    return new StepError('EXPRESSION_TYPE_MISMATCH', step.name, message, {
      cause: error,
      details: { condition, ...error.operands },
    });
  return new StepError('DECISION_NO_ROUTE', step.name, message, { cause: error });
}
