/**
 * Load-time resolution of every function path a definition names.
 *
 * A missing module or export found at load is a line number; found when the step first runs
 * it is a failed workflow. Each distinct path is imported once.
 */
import { collectFunctionRefs } from './functionRefs.js';
import { parseFunctionPath, resolveStepFunction, StepFunctionError } from './functionPath.js';
import { errorIssue, type RawIssue } from './rawIssue.js';
import { collectRawSteps } from './rawSteps.js';

/** Resolve every well-formed function path of a raw definition under `stepsRoot`. */
export async function checkFunctionResolution(
  definition: unknown,
  stepsRoot: string,
): Promise<RawIssue[]> {
  const refs = collectFunctionRefs(collectRawSteps(definition)).filter((ref) => {
    try {
      parseFunctionPath(ref.functionPath);
      return true;
    } catch {
      return false; // already reported by the cross-checks
    }
  });
  const attempts = new Map<string, Promise<StepFunctionError | undefined>>();
  const attempt = (functionPath: string): Promise<StepFunctionError | undefined> => {
    let pending = attempts.get(functionPath);
    if (pending === undefined) {
      pending = resolveStepFunction(functionPath, stepsRoot).then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof StepFunctionError) return error;
          throw error;
        },
      );
      attempts.set(functionPath, pending);
    }
    return pending;
  };
  const results = await Promise.all(
    refs.map(async (ref) => ({ ref, error: await attempt(ref.functionPath) })),
  );
  return results.flatMap(({ ref, error }) =>
    error === undefined
      ? []
      : [
          errorIssue(
            error.code === 'FUNCTION_PATH_INVALID' ? 'FUNCTION_PATH_INVALID' : 'FUNCTION_NOT_FOUND',
            ref.path,
            error.message,
          ),
        ],
  );
}
