/**
 * `ai_config.preprocessing`, applied to the value read from `input_source` before the model
 * sees it. Both transforms are fixed (the definition language has no place for parameters),
 * so they are defined exactly here and in docs/guides/writing-steps.md:
 *
 * - `normalize`: standardise each input to zero mean and unit variance over all its
 *   elements: `(x - mean) / std`, with the population standard deviation. An input whose
 *   elements are all equal becomes all zeros. (Per-feature scaling with training statistics
 *   belongs in the model graph, where it travels with the weights.)
 * - `resize`: nearest-neighbour resampling to the model's declared input shape (without its
 *   batch dimension, see `shape.ts`). Along each axis with a fixed declared size, output
 *   index `i` takes input index `floor(i × in / out)` (ONNX Resize `nearest` with
 *   `asymmetric` coordinates); free axes keep their size. The value must have the
 *   declaration's rank, so a `[H][W]` image fits `[N, H', W']` and `[H', W']` but not
 *   `[N, C, H', W']`. Only models that declare shapes (ONNX) can be resized to.
 * - `none` (or absent): the value is passed unchanged — for custom models, any JSON.
 *
 * Object inputs (one array per named model input) are processed input by input.
 */
import type { AiPreprocessing } from '../definition/index.js';
import { isPlainObject } from '../merge/json.js';
import { InferenceError } from './errors.js';
import type { TensorSpec } from './provider.js';
import { isFreeDim, sampleShape } from './shape.js';
import { formatShape, sizeOf, toNested, toTensor, type NumericTensor } from './tensor.js';

/** Standardise to zero mean and unit (population) variance; constant inputs become zeros. */
export function normalize(tensor: NumericTensor): NumericTensor {
  const n = tensor.data.length;
  const mean = tensor.data.reduce((a, b) => a + b, 0) / n;
  const variance = tensor.data.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
  const std = Math.sqrt(variance);
  const scale = std > 0 ? 1 / std : 0;
  return { data: tensor.data.map((x) => (x - mean) * scale), dims: tensor.dims };
}

/** Nearest-neighbour resampling of `tensor` to `dims` (same rank). */
export function resizeNearest(tensor: NumericTensor, dims: readonly number[]): NumericTensor {
  const from = tensor.dims;
  const rank = from.length;
  const strides = new Array<number>(rank).fill(1);
  for (let axis = rank - 2; axis >= 0; axis--) strides[axis] = strides[axis + 1]! * from[axis + 1]!;
  const maps = dims.map((size, axis) =>
    Array.from({ length: size }, (_, i) =>
      Math.min(from[axis]! - 1, Math.floor((i * from[axis]!) / size)),
    ),
  );
  const total = sizeOf(dims);
  const data = new Array<number>(total);
  const index = new Array<number>(rank).fill(0);
  for (let out = 0; out < total; out++) {
    let source = 0;
    for (let axis = 0; axis < rank; axis++) source += maps[axis]![index[axis]!]! * strides[axis]!;
    data[out] = tensor.data[source]!;
    for (let axis = rank - 1; axis >= 0; axis--) {
      if (++index[axis]! < dims[axis]!) break;
      index[axis] = 0;
    }
  }
  return { data, dims: [...dims] };
}

function resizeTo(
  tensor: NumericTensor,
  spec: TensorSpec | undefined,
  label: string,
): NumericTensor {
  if (spec?.shape === undefined) {
    throw new InferenceError(
      'INFERENCE_INPUT_INVALID',
      `preprocessing 'resize' needs a declared input shape, and the model declares none for ${label}`,
    );
  }
  const sample = sampleShape(spec.shape, tensor.dims.length);
  if (sample === undefined) {
    throw new InferenceError(
      'INFERENCE_INPUT_INVALID',
      `${label} has shape ${formatShape(tensor.dims)}, which cannot be resized to model input '${spec.name}' ${formatShape(spec.shape)}: the ranks differ`,
    );
  }
  const target = sample.map((d, axis) => (isFreeDim(d) ? tensor.dims[axis]! : (d as number)));
  return resizeNearest(tensor, target);
}

/**
 * Apply `kind` to the value read from `input_source` (called `label` in errors), given the
 * model's declared inputs.
 */
export function preprocessInput(
  value: unknown,
  kind: AiPreprocessing | undefined,
  inputs: readonly TensorSpec[],
  label: string,
): unknown {
  if (kind === undefined || kind === 'none') return value;
  const one = (item: unknown, itemLabel: string, spec: TensorSpec | undefined): unknown => {
    const tensor = toTensor(item, itemLabel);
    return toNested(kind === 'normalize' ? normalize(tensor) : resizeTo(tensor, spec, itemLabel));
  };
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      out[name] = one(
        item,
        `${label}.${name}`,
        inputs.find((spec) => spec.name === name),
      );
    }
    return out;
  }
  if (kind === 'resize' && inputs.length > 1) {
    throw new InferenceError(
      'INFERENCE_INPUT_INVALID',
      `the model has ${inputs.length} inputs (${inputs.map((s) => s.name).join(', ')}); ${label} must be an object with one array per input`,
    );
  }
  return one(value, label, inputs[0]);
}
