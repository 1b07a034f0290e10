/**
 * Small ONNX models built in JS with onnx-proto, written to a temp folder at test time (no
 * binary models in the repository). Each is a few standard operators (opset 13) whose
 * output a test can compute by hand.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto, { type onnx as Onnx } from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;

/** A declared dimension: a size or a symbolic name. */
type Dim = number | string;

/** Element types the test models use, by ORT name. */
const ELEMENT_TYPES = {
  float32: onnx.TensorProto.DataType.FLOAT,
  float64: onnx.TensorProto.DataType.DOUBLE,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
  uint8: onnx.TensorProto.DataType.UINT8,
} as const;

function valueInfo(name: string, dims: readonly Dim[], elemType: number = FLOAT) {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: {
          dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })),
        },
      },
    },
  };
}

function encode(graph: Onnx.IGraphProto): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'saffron-tests',
    opsetImport: [{ domain: '', version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * Logistic regression: `score = sigmoid(features · weights + bias)`, input `features`
 * `[N, n]` float32, output `score` `[N, 1]`.
 */
export function logisticRegressionModel(weights: readonly number[], bias: number): Uint8Array {
  const n = weights.length;
  return encode({
    name: 'logistic_regression',
    node: [
      { opType: 'MatMul', input: ['features', 'W'], output: ['z0'], name: 'matmul' },
      { opType: 'Add', input: ['z0', 'b'], output: ['z'], name: 'add' },
      { opType: 'Sigmoid', input: ['z'], output: ['score'], name: 'sigmoid' },
    ],
    initializer: [
      { name: 'W', dims: [n, 1], dataType: FLOAT, floatData: [...weights] },
      { name: 'b', dims: [1], dataType: FLOAT, floatData: [bias] },
    ],
    input: [valueInfo('features', ['N', n])],
    output: [valueInfo('score', ['N', 1])],
  });
}

/**
 * Linear classifier over `k` classes: `logits = x · Wᵀ + b` (W is k×n, one row per class) and
 * `probabilities = softmax(logits)`; input `x` `[N, n]`, outputs `logits` then
 * `probabilities`, both `[N, k]`.
 */
export function linearClassifierModel(
  weights: readonly (readonly number[])[],
  bias: readonly number[],
): Uint8Array {
  const k = weights.length;
  const n = weights[0]!.length;
  const transposed: number[] = [];
  for (let i = 0; i < n; i++) for (let c = 0; c < k; c++) transposed.push(weights[c]![i]!);
  return encode({
    name: 'linear_classifier',
    node: [
      { opType: 'MatMul', input: ['x', 'Wt'], output: ['xw'], name: 'matmul' },
      { opType: 'Add', input: ['xw', 'b'], output: ['logits'], name: 'add' },
      {
        opType: 'Softmax',
        input: ['logits'],
        output: ['probabilities'],
        name: 'softmax',
        attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: -1 }],
      },
    ],
    initializer: [
      { name: 'Wt', dims: [n, k], dataType: FLOAT, floatData: transposed },
      { name: 'b', dims: [k], dataType: FLOAT, floatData: [...bias] },
    ],
    input: [valueInfo('x', ['N', n])],
    output: [valueInfo('logits', ['N', k]), valueInfo('probabilities', ['N', k])],
  });
}

/** `y = x` with the declared shape and element type: shows what the model was fed. */
export function identityModel(
  shape: readonly Dim[],
  type: keyof typeof ELEMENT_TYPES = 'float32',
): Uint8Array {
  const elemType = ELEMENT_TYPES[type];
  return encode({
    name: 'identity',
    node: [{ opType: 'Identity', input: ['x'], output: ['y'], name: 'identity' }],
    input: [valueInfo('x', shape, elemType)],
    output: [valueInfo('y', shape, elemType)],
  });
}

/** `sum = a + b`, two inputs `[N, n]`: a model with named inputs. */
export function sumModel(n: number): Uint8Array {
  return encode({
    name: 'sum',
    node: [{ opType: 'Add', input: ['a', 'b'], output: ['sum'], name: 'add' }],
    input: [valueInfo('a', ['N', n]), valueInfo('b', ['N', n])],
    output: [valueInfo('sum', ['N', n])],
  });
}

/** `y = log(x)`: gives -Infinity for 0, a non-JSON output. */
export function logModel(n: number): Uint8Array {
  return encode({
    name: 'log',
    node: [{ opType: 'Log', input: ['x'], output: ['y'], name: 'log' }],
    input: [valueInfo('x', ['N', n])],
    output: [valueInfo('y', ['N', n])],
  });
}

/** A temp folder for model files, removed by `remove()`. */
export interface ModelFolder {
  dir: string;
  /** Write `bytes` to `<dir>/<file>` and return the path. */
  write(file: string, bytes: Uint8Array | string): string;
  remove(): void;
}

/** A new temp folder for models. */
export function modelFolder(): ModelFolder {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-models-'));
  return {
    dir,
    write(file, bytes) {
      const path = join(dir, file);
      writeFileSync(path, bytes);
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Logistic function, for expected values. */
export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** Dot product, for expected values. */
export const dot = (a: readonly number[], b: readonly number[]): number =>
  a.reduce((sum, x, i) => sum + x * b[i]!, 0);
