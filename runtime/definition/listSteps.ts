/**
 * Flat view of a definition's steps, LOOP bodies included.
 *
 * Name lookups, function preloading and WASM prefetch all need every step regardless of
 * nesting; one walker keeps them from each re-implementing (and forgetting) the recursion.
 */
import { formatPath, type PathSegment } from './path.js';
import type { StepDefinition, WorkflowDefinition } from './types.js';

/**
 * A step (a shallow copy of its fields) plus where it sits in the definition. It is still a
 * {@link StepDefinition}, so `listed.type` narrows as usual.
 */
export type ListedStep = StepDefinition & {
  /** Key path, e.g. `steps[3].loop_body[0]`. */
  readonly path: string;
  /** Name of the enclosing LOOP step, for steps in a loop body. */
  readonly loopName?: string;
};

/** Every step in definition order (a LOOP precedes its body), each with its path. */
export function listSteps(definition: WorkflowDefinition): ListedStep[] {
  const listed: ListedStep[] = [];
  const visit = (steps: StepDefinition[], base: PathSegment[], loopName?: string): void => {
    steps.forEach((step, index) => {
      const path = [...base, index];
      listed.push(
        loopName === undefined
          ? { ...step, path: formatPath(path) }
          : { ...step, path: formatPath(path), loopName },
      );
      if (step.type === 'LOOP') visit(step.loop_body, [...path, 'loop_body'], step.name);
    });
  };
  visit(definition.steps, ['steps']);
  return listed;
}
