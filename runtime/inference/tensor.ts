/**
 * JSON values ↔ dense numeric tensors. Workflow state holds model inputs as (nested) number
 * arrays; models want a flat row-major buffer and its dimensions. The conversion is strict
 * — a string, `null` or a ragged row names the exact element — because a silently coerced
 * `"12.5"` or a zero-filled gap would be scored as if it were data.
 */
import { InferenceError } from './errors.js';

/** A dense tensor: row-major values and dimensions (`[]` for a scalar). */
export interface NumericTensor {
  readonly data: readonly number[];
  readonly dims: readonly number[];
}

/** Short description of a JSON value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.slice(0, 40))})`;
  if (typeof value === 'number') return Number.isFinite(value) ? `the number ${value}` : 'NaN';
  return `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`;
}

/** `[1, 4]` style text of a shape. */
export function formatShape(dims: readonly (number | string | null)[]): string {
  return `[${dims.map((d) => (d === null || d === '' ? '?' : String(d))).join(', ')}]`;
}

const invalid = (message: string) => new InferenceError('INFERENCE_INPUT_INVALID', message);

/**
 * Read a number, or a rectangular nest of number arrays, as a tensor. A lone number is a
 * vector of one. `label` names the value in errors (`features` → `features[2] is null`).
 */
export function toTensor(value: unknown, label: string): NumericTensor {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`${label} is not a finite number`);
    return { data: [value], dims: [1] };
  }
  if (!Array.isArray(value)) {
    throw invalid(`${label} is ${describeValue(value)}; expected a number array`);
  }
  const dims: number[] = [];
  let probe: unknown = value;
  let where = label;
  while (Array.isArray(probe)) {
    if (probe.length === 0) throw invalid(`${where} is an empty array`);
    dims.push(probe.length);
    probe = probe[0];
    where += '[0]';
  }
  const data: number[] = [];
  const walk = (node: unknown, depth: number, path: string): void => {
    if (depth === dims.length) {
      if (typeof node !== 'number' || !Number.isFinite(node)) {
        throw invalid(`${path} is ${describeValue(node)}; expected a number`);
      }
      data.push(node);
      return;
    }
    const size = dims[depth]!;
    if (!Array.isArray(node)) {
      throw invalid(`${path} is ${describeValue(node)}; expected an array of ${size}`);
    }
    if (node.length !== size) {
      throw invalid(
        `${path} has ${node.length} items where its siblings have ${size} (arrays must be rectangular)`,
      );
    }
    for (let i = 0; i < size; i++) walk(node[i], depth + 1, `${path}[${i}]`);
  };
  walk(value, 0, label);
  return { data, dims };
}

/** Nested arrays of a tensor (a plain number for a scalar). */
export function toNested(tensor: NumericTensor): unknown {
  const { data, dims } = tensor;
  if (dims.length === 0) return data[0];
  let offset = 0;
  const build = (depth: number): unknown[] => {
    const size = dims[depth]!;
    const out: unknown[] = new Array<unknown>(size);
    for (let i = 0; i < size; i++) {
      out[i] = depth === dims.length - 1 ? data[offset++] : build(depth + 1);
    }
    return out;
  };
  return build(0);
}

/** Number of elements of a shape. */
export function sizeOf(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}
