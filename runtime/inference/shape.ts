/**
 * Fitting a state value's shape to a model's declared input shape.
 *
 * Models are usually exported with a batch dimension (`[N, 4]`, `[1, 3, 224, 224]`) while a
 * workflow scores one sample (`[4]`). The rule, in full: when the value has one dimension
 * fewer than the declaration and the declaration's first dimension is free or 1, a batch
 * dimension of 1 is added in front (and removed again from the outputs); otherwise the ranks
 * must be equal. Every declared fixed size must then match. Anything else is an input error
 * that names both shapes — the model would reject it anyway, less legibly.
 */
import { InferenceError } from './errors.js';
import { formatShape } from './tensor.js';

/** A declared dimension: a fixed size, or a name / `null` for a free one. */
export type DeclaredDim = number | string | null;

/** True when a declared dimension accepts any size. */
export const isFreeDim = (dim: DeclaredDim): boolean => typeof dim !== 'number' || dim < 0;

/** The dimensions to feed, and whether a batch dimension was added. */
export interface FittedShape {
  dims: number[];
  batched: boolean;
}

/**
 * The declared shape of one sample: the declaration without its batch dimension when the
 * value has one dimension fewer, else the declaration itself; `undefined` when the ranks do
 * not fit either way.
 */
export function sampleShape(
  declared: readonly DeclaredDim[],
  rank: number,
): readonly DeclaredDim[] | undefined {
  if (declared.length === rank) return declared;
  const batch = declared[0];
  if (declared.length === rank + 1 && batch !== undefined && (isFreeDim(batch) || batch === 1)) {
    return declared.slice(1);
  }
  return undefined;
}

/** Fit `dims` (of the value called `label`) to the declared shape of model input `input`. */
export function fitShape(
  dims: readonly number[],
  declared: readonly DeclaredDim[] | undefined,
  label: string,
  input: string,
): FittedShape {
  if (declared === undefined) return { dims: [...dims], batched: false };
  const sample = sampleShape(declared, dims.length);
  const fits = sample !== undefined && sample.every((d, i) => isFreeDim(d) || d === dims[i]);
  if (!fits) {
    throw new InferenceError(
      'INFERENCE_INPUT_INVALID',
      `${label} has shape ${formatShape(dims)}; model input '${input}' expects ${formatShape(declared)}`,
    );
  }
  const batched = declared.length === dims.length + 1;
  return { dims: batched ? [1, ...dims] : [...dims], batched };
}
