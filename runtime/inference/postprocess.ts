/**
 * `ai_config.postprocessing`: the model's output → the JSON object written to
 * `state[output_key]`. Shapes, exactly:
 *
 * | postprocessing   | result |
 * |------------------|--------|
 * | `none` / absent  | `{ output }`: the output tensor as nested arrays (a batch dimension the runtime added is removed), or a custom function's JSON value as returned |
 * | `softmax`        | `{ probabilities, index, label, score }`: `probabilities` = softmax of the output vector, `index` its argmax, `score` = `probabilities[index]` |
 * | `argmax`         | `{ index, label, score }`: `score` = the raw output value at `index` |
 * | `threshold`      | `{ score, label }`: `score` = the single output value (or `values[postprocessing_params.index]`); `label` = `score >= threshold` (default threshold 0.5), or `labels[1]` / `labels[0]` when `postprocessing_params.labels` names the two classes |
 *
 * `label` of softmax / argmax is `labels[index]` with `postprocessing_params.labels`, else the
 * index. Ties go to the lowest index. softmax, argmax and threshold need one vector: every
 * dimension but one must be 1.
 */
import type { AiConfig, JsonObject } from '../definition/index.js';
import { isPlainObject } from '../merge/json.js';
import { InferenceError } from './errors.js';
import type { ModelOutput } from './provider.js';
import { describeValue, formatShape, toNested, toTensor } from './tensor.js';

/** Threshold of `postprocessing: threshold` when `ai_config.threshold` is absent. */
export const DEFAULT_THRESHOLD = 0.5;

const invalid = (message: string) => new InferenceError('INFERENCE_OUTPUT_INVALID', message);

/** Throw unless `value` is plain JSON (finite numbers, strings, booleans, null, arrays, objects). */
function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`${path} is not a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertJson(item, `${path}[${i}]`));
    return;
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) assertJson(item, `${path}.${key}`);
    return;
  }
  throw invalid(`${path} is ${describeValue(value)}, which is not JSON`);
}

function vector(output: ModelOutput, kind: string): number[] {
  const tensor =
    output.kind === 'tensor'
      ? output.tensor
      : (() => {
          try {
            return toTensor(output.value, 'the model output');
          } catch (error) {
            throw invalid(
              `postprocessing '${kind}' needs numbers: ${error instanceof Error ? error.message : String(error)}`,
            );
          }
        })();
  if (tensor.dims.filter((d) => d > 1).length > 1) {
    throw invalid(
      `postprocessing '${kind}' needs one vector; the model output has shape ${formatShape(tensor.dims)}`,
    );
  }
  const values = [...tensor.data];
  const bad = values.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) throw invalid(`model output value ${bad} is not a finite number`);
  if (values.length === 0) throw invalid('the model output is empty');
  return values;
}

function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** Softmax of a vector (shifted by its maximum, so large logits do not overflow). */
export function softmax(values: readonly number[]): number[] {
  const max = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

function labelOf(index: number, count: number, labels: readonly string[] | undefined) {
  if (labels === undefined) return index;
  if (labels.length !== count) {
    throw invalid(
      `postprocessing_params.labels names ${labels.length} classes but the model output has ${count} values`,
    );
  }
  return labels[index]!;
}

/** Turn a model output into the object written to `state[config.output_key]`. */
export function postprocess(output: ModelOutput, config: AiConfig): JsonObject {
  const params = config.postprocessing_params ?? {};
  switch (config.postprocessing ?? 'none') {
    case 'none': {
      if (output.kind === 'tensor') {
        const bad = output.tensor.data.findIndex((v) => !Number.isFinite(v));
        if (bad >= 0)
          throw invalid(`model output '${output.name}' value ${bad} is not a finite number`);
        return { output: toNested(output.tensor) };
      }
      if (output.value === undefined) throw invalid('the custom model returned nothing');
      assertJson(output.value, 'the model output');
      return { output: output.value };
    }
    case 'softmax': {
      const probabilities = softmax(vector(output, 'softmax'));
      const index = argmax(probabilities);
      const label = labelOf(index, probabilities.length, params.labels);
      return { probabilities, index, label, score: probabilities[index]! };
    }
    case 'argmax': {
      const values = vector(output, 'argmax');
      const index = argmax(values);
      return { index, label: labelOf(index, values.length, params.labels), score: values[index]! };
    }
    case 'threshold': {
      const values = vector(output, 'threshold');
      let score: number;
      if (params.index !== undefined) {
        if (params.index >= values.length) {
          throw invalid(
            `postprocessing_params.index ${params.index} is out of range: the model output has ${values.length} values`,
          );
        }
        score = values[params.index]!;
      } else if (values.length === 1) {
        score = values[0]!;
      } else {
        throw invalid(
          `postprocessing 'threshold' needs one output value, the model gave ${values.length}; set postprocessing_params.index to pick one`,
        );
      }
      const positive = score >= (config.threshold ?? DEFAULT_THRESHOLD);
      const labels = params.labels;
      if (labels !== undefined && labels.length !== 2) {
        throw invalid(
          `postprocessing 'threshold' takes two labels [negative, positive]; postprocessing_params.labels has ${labels.length}`,
        );
      }
      return { score, label: labels === undefined ? positive : labels[positive ? 1 : 0]! };
    }
  }
}
