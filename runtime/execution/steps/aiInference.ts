/**
 * AI_INFERENCE: run the step's model on the value at `input_source` and write the
 * postprocessed result to `state[output_key]` (shapes in `inference/postprocess.ts`).
 *
 * Any failure — no model, a file that does not load, an input of the wrong shape or type,
 * an output the postprocessing cannot read, a timeout — goes through `fallback_on_error`:
 * `fail` (the default) fails the step with AI_INFERENCE_FAILED naming the step, the model
 * and the cause; `skip` writes `{}` and `default` writes `default_result` (or `{}`) to
 * `output_key`, so later steps read one place either way. A swallowed failure is logged at
 * warn level with its code, so it stays visible in the step's logs.
 */
import type { AiInferenceStep } from '../../definition/index.js';
import { toError } from '../../errors.js';
import { InferenceError, readInputSource } from '../../inference/index.js';
import type { JsonObject } from '../../model/json.js';
import { StepError } from '../errors.js';
import type { StepResult, StepRun } from '../run.js';

const ms = (value: number) => Math.round(value * 1000) / 1000;

/** Execute one AI_INFERENCE step. */
export async function executeAiInference(step: AiInferenceStep, run: StepRun): Promise<StepResult> {
  const config = step.ai_config;
  const inference = run.inference;
  if (inference === undefined) {
    return {
      kind: 'failed',
      error: new StepError(
        'STEP_KIND_UNAVAILABLE',
        step.name,
        'AI_INFERENCE steps need a model registry this runtime was not given',
      ),
    };
  }
  const model = `${config.runtime} model '${config.model_name}'`;
  let output: JsonObject;
  try {
    const input = readInputSource(run.state, config.input_source);
    const result = await inference.run(config, input, {
      signal: run.context.signal,
      workflowId: run.context.workflowId,
      stepName: step.name,
    });
    run.context.log.info(`${model} ran in ${ms(result.durationMs)} ms`, {
      model: config.model_name,
      runtime: config.runtime,
      duration_ms: ms(result.durationMs),
      ...(result.model.file ? { model_sha256: result.model.file.sha256 } : {}),
    });
    output = result.output;
  } catch (thrown) {
    const error =
      thrown instanceof InferenceError
        ? thrown
        : new InferenceError('INFERENCE_FAILED', toError(thrown).message, { cause: thrown });
    const fallback = config.fallback_on_error ?? 'fail';
    if (fallback === 'fail') {
      return {
        kind: 'failed',
        error: new StepError(
          'AI_INFERENCE_FAILED',
          step.name,
          `step '${step.name}': ${model} failed (${error.code}): ${error.message}`,
          {
            cause: error,
            details: { model: config.model_name, runtime: config.runtime, reason: error.code },
          },
        ),
      };
    }
    output = fallback === 'default' ? structuredClone(config.default_result ?? {}) : {};
    run.context.log.warn(
      `${model} failed (${error.code}): ${error.message}; fallback_on_error ${fallback} applied`,
      { model: config.model_name, code: error.code, fallback },
    );
  }
  return { kind: 'completed', state: { ...run.state, [config.output_key]: output } };
}
