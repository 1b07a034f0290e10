/**
 * ONNX models on ONNX Runtime's CPU execution provider (onnxruntime-node).
 *
 * The package is imported on first use, not at start-up: its native library costs tens of
 * milliseconds to load and a runtime without AI_INFERENCE steps (or a device without the
 * binary) should not pay for it. It is an optional dependency: when it is not installed, the
 * first model load fails with `DEPENDENCY_MISSING` naming it, and the declarations an
 * embedder compiles against do not name its types. Sessions default to one intra-op thread: the models a
 * payment flow scores are small, where thread hand-offs cost more than they save, and a
 * device's few cores are busy with the rest of the runtime.
 *
 * Inputs are JSON numbers converted to the element type the model declares (float32,
 * float64, int32, int64, int8, uint8; integer types reject fractions and out-of-range
 * values rather than truncating them). Shapes are fitted by `fitShape`.
 */
import type * as OrtModule from 'onnxruntime-node';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { isPlainObject } from '../merge/json.js';
import { importOptional } from '../optionalDependency.js';
import { InferenceError } from './errors.js';
import type { InferenceProvider, LoadedModel, ModelOutput, TensorSpec } from './provider.js';
import { fitShape } from './shape.js';
import { describeValue, toTensor } from './tensor.js';

/** Session options of {@link onnxProvider}. */
export interface OnnxProviderOptions {
  /** Threads one operator may use (default 1). */
  intraOpNumThreads?: number;
  /** Graph optimisation level (default `all`). */
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'layout' | 'all';
}

type Ort = typeof OrtModule;
type Feed = Tensor.DataType;

const integers =
  <A extends Int8Array | Uint8Array | Int32Array>(
    Make: { from(values: readonly number[]): A },
    min: number,
    max: number,
  ) =>
  (data: readonly number[], label: string): A => {
    const bad = data.findIndex((v) => !Number.isInteger(v) || v < min || v > max);
    if (bad >= 0) {
      throw new InferenceError(
        'INFERENCE_INPUT_INVALID',
        `${label} element ${bad} (${data[bad]}) is not an integer in ${min}..${max}, as the model's input type needs`,
      );
    }
    return Make.from(data);
  };

const FEEDERS: Partial<Record<Tensor.Type, (data: readonly number[], label: string) => Feed>> = {
  float32: (data) => Float32Array.from(data),
  float64: (data) => Float64Array.from(data),
  int32: integers(Int32Array, -(2 ** 31), 2 ** 31 - 1),
  int8: integers(Int8Array, -128, 127),
  uint8: integers(Uint8Array, 0, 255),
  int64: (data, label) => {
    const bad = data.findIndex((v) => !Number.isSafeInteger(v));
    if (bad >= 0) {
      throw new InferenceError(
        'INFERENCE_INPUT_INVALID',
        `${label} element ${bad} (${data[bad]}) is not a safe integer, as the model's int64 input needs`,
      );
    }
    return BigInt64Array.from(data, (v) => BigInt(v));
  },
};

function specOf(meta: InferenceSession.ValueMetadata): TensorSpec {
  if (!meta.isTensor) return { name: meta.name };
  return { name: meta.name, type: meta.type, shape: meta.shape };
}

/** Feeds for `input`, and whether every input got a batch dimension added. */
function buildFeeds(ort: Ort, input: unknown, inputs: readonly TensorSpec[], label: string) {
  const named: [TensorSpec, unknown, string][] = [];
  if (isPlainObject(input)) {
    const unknown = Object.keys(input).filter((key) => !inputs.some((s) => s.name === key));
    const missing = inputs.filter((s) => !Object.hasOwn(input, s.name)).map((s) => s.name);
    if (unknown.length > 0 || missing.length > 0) {
      throw new InferenceError(
        'INFERENCE_INPUT_INVALID',
        `${label} must hold exactly the model's inputs (${inputs.map((s) => s.name).join(', ')})` +
          (missing.length ? `; missing ${missing.join(', ')}` : '') +
          (unknown.length ? `; unknown ${unknown.join(', ')}` : ''),
      );
    }
    for (const spec of inputs) named.push([spec, input[spec.name], `${label}.${spec.name}`]);
  } else {
    if (inputs.length !== 1) {
      throw new InferenceError(
        'INFERENCE_INPUT_INVALID',
        `the model has ${inputs.length} inputs (${inputs.map((s) => s.name).join(', ')}); ${label} must be an object with one array per input, not ${describeValue(input)}`,
      );
    }
    named.push([inputs[0]!, input, label]);
  }
  const feeds: Record<string, Tensor> = {};
  let batched = true;
  for (const [spec, value, where] of named) {
    const tensor = toTensor(value, where);
    const fitted = fitShape(tensor.dims, spec.shape, where, spec.name);
    batched &&= fitted.batched;
    const type = spec.type as Tensor.Type | undefined;
    const feeder = type === undefined ? undefined : FEEDERS[type];
    if (type === undefined || feeder === undefined) {
      throw new InferenceError(
        'INFERENCE_INPUT_INVALID',
        `model input '${spec.name}' has element type ${spec.type ?? '(not a tensor)'}, which cannot be fed from JSON numbers`,
      );
    }
    feeds[spec.name] = new ort.Tensor(type, feeder(tensor.data, where), fitted.dims);
  }
  return { feeds, batched };
}

/** Output element types whose data reads as plain numbers. */
const NUMERIC_OUTPUTS: ReadonlySet<string> = new Set([
  'float32',
  'float64',
  'int8',
  'uint8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'uint64',
  'bool',
]);

function readOutput(value: unknown, name: string, batched: boolean): ModelOutput {
  const tensor = value as Partial<Tensor> | undefined;
  if (
    tensor?.dims === undefined ||
    tensor.data === undefined ||
    !NUMERIC_OUTPUTS.has(tensor.type ?? '')
  ) {
    throw new InferenceError(
      'INFERENCE_OUTPUT_INVALID',
      `model output '${name}' is not a numeric tensor`,
    );
  }
  const data = Array.from(tensor.data as ArrayLike<number | bigint>, Number);
  const dims = [...tensor.dims];
  if (batched && dims[0] === 1) dims.shift();
  return { kind: 'tensor', name, tensor: { data, dims } };
}

function onnxModel(ort: Ort, session: InferenceSession): LoadedModel {
  const inputs = session.inputMetadata.map(specOf);
  const outputs = session.outputMetadata.map(specOf);
  let inFlight = 0;
  let closing: Promise<void> | undefined;
  let released: (() => void) | undefined;
  const release = () => {
    const done = () => released?.();
    session.release().then(done, done);
  };
  return {
    inputs,
    outputs,
    async run(input, options) {
      if (closing) throw new InferenceError('INFERENCE_CLOSED', 'the model was closed');
      const name = options.output ?? outputs[0]?.name;
      if (name === undefined || !outputs.some((o) => o.name === name)) {
        throw new InferenceError(
          'INFERENCE_OUTPUT_INVALID',
          `the model has no output '${String(name)}' (outputs: ${outputs.map((o) => o.name).join(', ')})`,
        );
      }
      const { feeds, batched } = buildFeeds(ort, input, inputs, options.label ?? 'the input');
      inFlight++;
      let result: InferenceSession.ReturnType;
      try {
        result = await session.run(feeds, [name]);
      } catch (cause) {
        throw new InferenceError(
          'INFERENCE_FAILED',
          `ONNX Runtime failed: ${cause instanceof Error ? cause.message : String(cause)}`,
          { cause },
        );
      } finally {
        if (--inFlight === 0 && closing) release();
      }
      return readOutput(result[name], name, batched);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        released = resolve;
        if (inFlight === 0) release();
      });
      return closing;
    },
  };
}

/** The built-in `onnx` provider. */
export function onnxProvider(options: OnnxProviderOptions = {}): InferenceProvider {
  let ort: Promise<Ort> | undefined;
  return {
    fileExtension: '.onnx',
    async load({ name, file }) {
      if (file === undefined) {
        throw new InferenceError('MODEL_NOT_FOUND', `ONNX model '${name}' needs a model file`);
      }
      const runtime = await (ort ??= importOptional(
        ['onnxruntime-node'],
        'the onnx inference provider',
        () => import('onnxruntime-node'),
      ));
      const session = await runtime.InferenceSession.create(file.bytes, {
        executionProviders: ['cpu'],
        intraOpNumThreads: options.intraOpNumThreads ?? 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: options.graphOptimizationLevel ?? 'all',
      });
      return onnxModel(runtime, session);
    },
  };
}
