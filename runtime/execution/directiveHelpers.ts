/**
 * Typed helpers that throw the directives, for step functions written against this package.
 * Each returns `never`: a helper that merely built a directive would let `pause()` without
 * `throw` do nothing at all — the step would return, and a HUMAN_IN_LOOP step would then
 * wait anyway but a STANDARD one would silently move on. Throwing inside the helper keeps
 * the call the whole statement, and the compiler knows nothing after it runs.
 *
 * Step modules that do not import Saffron can throw any error with the directive's `name`
 * and fields instead (see `directives.ts`); the engine reads both the same way.
 */
import type { JsonObject } from '../model/json.js';
import {
  StartSubWorkflowDirective,
  WorkflowJumpDirective,
  WorkflowPauseDirective,
  WorkflowProceedDirective,
} from './directives.js';

/**
 * Park the workflow in WAITING_HUMAN_INPUT until `resume(id, input)`; `result` is merged into
 * state first (what the person is asked, for example). The resume runs the same step again
 * with the input in `context.input`.
 *
 * @example
 * ```ts
 * export function review(state, context) {
 *   if (!context.input) pause({ prompt: 'approve the refund?' });
 *   return { approved: context.input.approved === true };
 * }
 * ```
 */
export function pause(result: JsonObject = {}): never {
  throw new WorkflowPauseDirective(result);
}

/**
 * Leave the step for step `stepName` (changes made to `state` in place are kept). An unknown
 * step fails the step with JUMP_TARGET_UNKNOWN.
 */
export function jumpTo(stepName: string): never {
  throw new WorkflowJumpDirective(stepName);
}

/**
 * Start a workflow of `workflowType` with `initialData` and wait for it (PENDING_SUB_WORKFLOW);
 * its final state lands in `state.sub_workflow_results[workflowType]`. An unregistered type
 * fails the step with SUB_WORKFLOW_FAILED.
 */
export function startSubWorkflow(workflowType: string, initialData: JsonObject = {}): never {
  throw new StartSubWorkflowDirective(workflowType, initialData);
}

/**
 * Complete the step now with `result` merged into state. Anywhere but HUMAN_IN_LOOP this is
 * what returning `result` does; on a HUMAN_IN_LOOP step's first run, where a return waits for
 * input, it is the explicit way to go on without a person (an amount under the review limit,
 * say).
 *
 * @example
 * ```ts
 * export function review(state, context) {
 *   if (state.amount_minor < 10_000) proceed({ review: { decision: 'auto' } });
 *   if (!context.input) pause({ prompt: 'approve the refund?' });
 *   return { review: { decision: context.input.decision } };
 * }
 * ```
 */
export function proceed(result: JsonObject = {}): never {
  throw new WorkflowProceedDirective(result);
}
