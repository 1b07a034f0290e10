/**
 * Calling a step function with the working-copy rule: the function gets a deep copy of the
 * state; changes it makes in place are kept when it returns or jumps and thrown away when it
 * fails; a returned object is merged on top. A proceed directive is a return the function made
 * on purpose (`proceeded`), which only a HUMAN_IN_LOOP step tells apart from a plain one.
 */
import { toError } from '../errors.js';
import { mergeState } from '../merge/index.js';
import type { JsonObject } from '../model/json.js';
import type { StepContext } from './context.js';
import { type Directive, readDirective } from './directives.js';
import { StepError } from './errors.js';
import type { StepExecutor } from './executor.js';

/** What calling a step function came to. */
export type InvokeResult =
  | { kind: 'returned'; state: JsonObject; proceeded?: true }
  | {
      kind: 'directive';
      directive: Exclude<Directive, { kind: 'proceed' }>;
      state: JsonObject;
    }
  | { kind: 'threw'; error: StepError };

const isPlainObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Call `functionPath` on a working copy of `state`. */
export async function invokeStepFunction(
  executor: StepExecutor,
  functionPath: string,
  state: JsonObject,
  context: StepContext,
): Promise<InvokeResult> {
  const working = structuredClone(state);
  let returned: unknown;
  let proceeded = false;
  try {
    returned = await executor.call(functionPath, working, context);
  } catch (thrown) {
    const directive = readDirective(thrown);
    if (directive?.kind === 'pause')
      return { kind: 'directive', directive, state: mergeState(working, directive.result) };
    if (directive?.kind === 'proceed') {
      returned = directive.result;
      proceeded = true;
    } else if (directive) return { kind: 'directive', directive, state: working };
    else {
      const error = toError(thrown);
      return {
        kind: 'threw',
        error: new StepError(
          'STEP_FUNCTION_FAILED',
          context.stepName,
          `${functionPath} failed: ${error.message}`,
          {
            cause: error,
            details: { function: functionPath },
          },
        ),
      };
    }
  }
  const marked = proceeded ? ({ proceeded: true } as const) : {};
  if (returned === undefined || returned === null)
    return { kind: 'returned', state: working, ...marked };
  if (!isPlainObject(returned)) {
    const got = Array.isArray(returned) ? 'an array' : typeof returned;
    return {
      kind: 'threw',
      error: new StepError(
        'STEP_RESULT_INVALID',
        context.stepName,
        `${functionPath} returned ${got}; a step must return an object or nothing`,
        {
          details: { function: functionPath },
        },
      ),
    };
  }
  try {
    return { kind: 'returned', state: mergeState(working, returned), ...marked };
  } catch (error) {
    return {
      kind: 'threw',
      error: new StepError('STEP_RESULT_INVALID', context.stepName, toError(error).message, {
        cause: error,
      }),
    };
  }
}
