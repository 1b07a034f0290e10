/**
 * Every function path a definition names, with where it is named.
 *
 * Syntax is checked on every load; resolution (importing the module) only when the caller
 * gives a steps root. Both read this one list so no field is checked by one and not the other.
 */
import type { PathSegment } from './path.js';
import type { RawStepTree } from './rawSteps.js';
import { isRecord } from './values.js';

/** A function path and the key path of the field that holds it. */
export interface FunctionRef {
  path: PathSegment[];
  functionPath: string;
}

const STEP_FUNCTION_FIELDS = ['function', 'compensate_function'] as const;

/** Collect `function`, `compensate_function` and PARALLEL `tasks[].function_path` values. */
export function collectFunctionRefs(tree: RawStepTree): FunctionRef[] {
  const refs: FunctionRef[] = [];
  for (const step of tree.steps) {
    for (const field of STEP_FUNCTION_FIELDS) {
      const value = step.record[field];
      if (typeof value === 'string' && value !== '') {
        refs.push({ path: [...step.path, field], functionPath: value });
      }
    }
    const tasks = step.record.tasks;
    if (step.type === 'PARALLEL' && Array.isArray(tasks)) {
      tasks.forEach((task: unknown, index) => {
        if (isRecord(task) && typeof task.function_path === 'string' && task.function_path !== '') {
          refs.push({
            path: [...step.path, 'tasks', index, 'function_path'],
            functionPath: task.function_path,
          });
        }
      });
    }
  }
  return refs;
}
