/**
 * Directives: errors a step function throws to steer its workflow instead of returning.
 * They are recognised by `name`, never by `instanceof`, so a directive thrown by another copy
 * of this package (a step module bundling its own) or rebuilt from a worker thread's message
 * still works. Both camelCase and snake_case fields are read, so step modules ported from
 * other engines keep working. The typed helpers that throw them are in `steer.ts`.
 */
import type { JsonObject } from '../model/json.js';

/** Jump to another step: `throw new WorkflowJumpDirective('approve')`. */
export class WorkflowJumpDirective extends Error {
  override readonly name = 'WorkflowJumpDirective';
  constructor(readonly targetStepName: string) {
    super(`jump to ${targetStepName}`);
  }
}

/** Park the workflow until a human resumes it: WAITING_HUMAN_INPUT. `result` is merged into state. */
export class WorkflowPauseDirective extends Error {
  override readonly name = 'WorkflowPauseDirective';
  constructor(readonly result: JsonObject = {}) {
    super('pause for human input');
  }
}

/** Start a child workflow and wait for it: PENDING_SUB_WORKFLOW. */
export class StartSubWorkflowDirective extends Error {
  override readonly name = 'StartSubWorkflowDirective';
  constructor(
    readonly workflowType: string,
    readonly initialData: JsonObject = {},
  ) {
    super(`start sub-workflow ${workflowType}`);
  }
}

/**
 * Complete the step now, `result` merged into state. A step's return does the same, except on
 * a HUMAN_IN_LOOP step's first run, where a return waits for input: this directive is how such
 * a step says, on purpose, that this time no human is needed.
 */
export class WorkflowProceedDirective extends Error {
  override readonly name = 'WorkflowProceedDirective';
  constructor(readonly result: JsonObject = {}) {
    super('proceed without waiting for input');
  }
}

/** A directive as the engine reads it. */
export type Directive =
  | { kind: 'jump'; target: string }
  | { kind: 'pause'; result: JsonObject }
  | { kind: 'proceed'; result: JsonObject }
  | { kind: 'subWorkflow'; workflowType: string; initialData: JsonObject };

const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The directive `thrown` carries, or undefined when it is an ordinary error. */
export function readDirective(thrown: unknown): Directive | undefined {
  if (!isObject(thrown)) return undefined;
  const field = (camel: string, snake: string): unknown => thrown[camel] ?? thrown[snake];
  switch (thrown.name) {
    case 'WorkflowJumpDirective': {
      const target = field('targetStepName', 'target_step_name');
      return typeof target === 'string' ? { kind: 'jump', target } : undefined;
    }
    case 'WorkflowPauseDirective': {
      const result = thrown.result;
      return { kind: 'pause', result: isObject(result) ? result : {} };
    }
    case 'WorkflowProceedDirective': {
      const result = thrown.result;
      return { kind: 'proceed', result: isObject(result) ? result : {} };
    }
    case 'StartSubWorkflowDirective': {
      const workflowType = field('workflowType', 'workflow_type');
      const initialData = field('initialData', 'initial_data');
      return typeof workflowType === 'string'
        ? {
            kind: 'subWorkflow',
            workflowType,
            initialData: isObject(initialData) ? initialData : {},
          }
        : undefined;
    }
    default:
      return undefined;
  }
}
