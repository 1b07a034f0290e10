/**
 * Steps of an unvalidated definition, with their paths and step-list scopes.
 *
 * Cross-checks walk this view rather than the parsed definition, so they still run when the
 * schema rejected some steps: a typo in one step must not hide a bad route in another, and a
 * step with an unknown `type` still counts as a route target (no cascade of false errors).
 */
import type { PathSegment } from './path.js';
import { isRecord, stringField } from './values.js';

/** A step list: the top-level `steps` or one LOOP's `loop_body`. */
export interface RawStepList {
  /** Index in {@link RawStepTree.lists}. */
  id: number;
  path: PathSegment[];
  /** The enclosing list (undefined for the top level). */
  parent: number | undefined;
  /** The LOOP step that owns this body. */
  loopName: string | undefined;
  steps: RawStep[];
}

/** One step as written. */
export interface RawStep {
  path: PathSegment[];
  record: Record<string, unknown>;
  /** `name` when it is a string. */
  name: string | undefined;
  /** `type` when it is a string (not necessarily a known kind). */
  type: string | undefined;
  /** Id of the list holding the step. */
  list: number;
}

/** All step lists and steps of a raw definition. */
export interface RawStepTree {
  lists: RawStepList[];
  steps: RawStep[];
}

/** Collect every step (LOOP bodies included) of a raw definition value. */
export function collectRawSteps(definition: unknown): RawStepTree {
  const tree: RawStepTree = { lists: [], steps: [] };
  const visit = (
    value: unknown,
    path: PathSegment[],
    parent: number | undefined,
    loopName: string | undefined,
  ): void => {
    if (!Array.isArray(value)) return;
    const list: RawStepList = { id: tree.lists.length, path, parent, loopName, steps: [] };
    tree.lists.push(list);
    value.forEach((item: unknown, index) => {
      if (!isRecord(item)) return;
      const step: RawStep = {
        path: [...path, index],
        record: item,
        name: stringField(item, 'name'),
        type: stringField(item, 'type'),
        list: list.id,
      };
      list.steps.push(step);
      tree.steps.push(step);
      visit(item.loop_body, [...step.path, 'loop_body'], list.id, step.name);
    });
  };
  if (isRecord(definition)) visit(definition.steps, ['steps'], undefined, undefined);
  return tree;
}

/** Ids of `list` and every list enclosing it. */
export function enclosingLists(tree: RawStepTree, list: number): number[] {
  const ids: number[] = [];
  for (let id: number | undefined = list; id !== undefined; id = tree.lists[id]?.parent) {
    ids.push(id);
  }
  return ids;
}
