/**
 * STANDARD and HUMAN_IN_LOOP (and the function part of DECISION): call the function, then
 * read a directive it may have thrown.
 *
 * HUMAN_IN_LOOP waits by default: on a run without input (the step reached, not resumed) a
 * function that returns parks the workflow in WAITING_HUMAN_INPUT exactly as a pause would,
 * its result merged into state. A function that forgot to pause — or returned where it meant
 * to throw — would otherwise complete straight past the person meant to approve. Going on
 * without a person is said explicitly, with the proceed directive. A run with input (a resume,
 * or `next` given input) moves on when the function returns.
 */
import type { HumanInLoopStep, StandardStep } from '../../definition/index.js';
import type { Directive } from '../directives.js';
import { StepError } from '../errors.js';
import { invokeStepFunction } from '../invoke.js';
import type { StepResult, StepRun } from '../run.js';
import type { JsonObject } from '../../model/json.js';

/** Map a directive to the step result it means. */
export function directiveResult(
  directive: Exclude<Directive, { kind: 'proceed' }>,
  state: JsonObject,
  run: StepRun,
): StepResult {
  switch (directive.kind) {
    case 'jump':
      return { kind: 'jumped', target: directive.target, state };
    case 'pause':
      return { kind: 'paused', state };
    case 'subWorkflow':
      if (!run.knowsWorkflowType(directive.workflowType)) {
        return {
          kind: 'failed',
          error: new StepError(
            'SUB_WORKFLOW_FAILED',
            run.context.stepName,
            `unknown sub-workflow type '${directive.workflowType}'`,
          ),
        };
      }
      return {
        kind: 'subWorkflow',
        state,
        child: {
          id: run.ids.uuid(),
          workflowType: directive.workflowType,
          initialData: directive.initialData,
          parent: true,
          stepName: run.context.stepName,
        },
      };
  }
}

/** Execute a STANDARD or HUMAN_IN_LOOP step. */
export async function executeFunctionStep(
  step: StandardStep | HumanInLoopStep,
  run: StepRun,
): Promise<StepResult> {
  const result = await invokeStepFunction(run.executor, step.function, run.state, run.context);
  switch (result.kind) {
    case 'returned':
      if (step.type === 'HUMAN_IN_LOOP' && !result.proceeded && run.context.input === undefined)
        return { kind: 'paused', state: result.state, byDefault: true };
      return { kind: 'completed', state: result.state };
    case 'directive':
      return directiveResult(result.directive, result.state, run);
    case 'threw':
      return { kind: 'failed', error: result.error };
  }
}
