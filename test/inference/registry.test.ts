/**
 * The model registry on real ONNX Runtime sessions: outputs against hand-computed values,
 * input shapes and types, session reuse and reload, file resolution, closing, timeouts.
 */
import { symlinkSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createModelRegistry,
  InferenceError,
  onnxProvider,
  type AiConfig,
  type InferenceProvider,
  type ModelRegistry,
} from '../../runtime/index.js';
import {
  dot,
  identityModel,
  linearClassifierModel,
  logisticRegressionModel,
  logModel,
  modelFolder,
  sigmoid,
  sumModel,
  type ModelFolder,
} from '../support/onnxModels.js';

const FRAUD_WEIGHTS = [0.8, -0.4, 1.5, 0.05];
const FRAUD_BIAS = -1.2;
const CLASS_WEIGHTS = [
  [1, 0, -1],
  [0, 2, 0.5],
  [-1, 1, 1],
];
const CLASS_BIAS = [0.1, -0.2, 0];

const config = (extra: Partial<AiConfig> & Pick<AiConfig, 'model_name'>): AiConfig => ({
  runtime: 'onnx',
  input_source: 'features',
  output_key: 'inference_result',
  timeout_ms: 5000,
  ...extra,
});

async function rejection(promise: Promise<unknown>): Promise<InferenceError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof InferenceError) return error;
    throw error;
  }
  throw new Error('expected an InferenceError');
}

/** The ONNX provider, counting loads and closes. */
function countingOnnx() {
  const inner = onnxProvider();
  const counts = { loads: 0, closes: 0 };
  const provider: InferenceProvider = {
    fileExtension: '.onnx',
    async load(request) {
      counts.loads++;
      const model = await inner.load(request);
      return {
        inputs: model.inputs,
        outputs: model.outputs,
        run: (input, options) => model.run(input, options),
        close: async () => {
          counts.closes++;
          await model.close();
        },
      };
    },
  };
  return { provider, counts };
}

describe('model registry on ONNX Runtime', () => {
  let folder: ModelFolder;
  let registry: ModelRegistry;
  beforeEach(() => {
    folder = modelFolder();
    folder.write('fraud.onnx', logisticRegressionModel(FRAUD_WEIGHTS, FRAUD_BIAS));
    folder.write('classes.onnx', linearClassifierModel(CLASS_WEIGHTS, CLASS_BIAS));
    registry = createModelRegistry({ modelsDir: folder.dir, root: folder.dir });
  });
  afterEach(async () => {
    await registry.close();
    folder.remove();
  });

  it('scores a logistic regression as sigmoid(w·x + b), one sample or a batch', async () => {
    const x = [1.5, 2, 0.3, 12];
    const expected = sigmoid(dot(FRAUD_WEIGHTS, x) + FRAUD_BIAS);
    const one = await registry.run(config({ model_name: 'fraud' }), x);
    expect(one.output).toEqual({ output: [expect.any(Number)] });
    expect((one.output.output as number[])[0]).toBeCloseTo(expected, 6);
    const threshold = await registry.run(
      config({ model_name: 'fraud', postprocessing: 'threshold', threshold: 0.8 }),
      x,
    );
    expect(Object.keys(threshold.output)).toEqual(['score', 'label']);
    expect(threshold.output.label).toBe(expected >= 0.8);
    expect(threshold.output.score).toBeCloseTo(expected, 6);
    const x2 = [0, 0, 0, 0];
    const batch = await registry.run(config({ model_name: 'fraud' }), [x, x2]);
    const rows = batch.output.output as number[][];
    expect(rows).toHaveLength(2);
    expect(rows[0]![0]).toBeCloseTo(expected, 6);
    expect(rows[1]![0]).toBeCloseTo(sigmoid(FRAUD_BIAS), 6);
    expect(one.model.file?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('classifies 3 classes: softmax and argmax of the logits, or the model’s own softmax', async () => {
    const x = [0.5, -1, 2];
    const logits = CLASS_WEIGHTS.map((w, c) => dot(w, x) + CLASS_BIAS[c]!);
    const exps = logits.map(Math.exp);
    const total = exps.reduce((a, b) => a + b, 0);
    const probabilities = exps.map((e) => e / total);
    const best = probabilities.indexOf(Math.max(...probabilities));
    const labels = ['approve', 'review', 'decline'];

    const soft = await registry.run(
      config({
        model_name: 'classes',
        postprocessing: 'softmax',
        postprocessing_params: { labels },
      }),
      x,
    );
    (soft.output.probabilities as number[]).forEach((p, i) =>
      expect(p).toBeCloseTo(probabilities[i]!, 6),
    );
    expect(soft.output).toMatchObject({ index: best, label: labels[best] });

    const arg = await registry.run(config({ model_name: 'classes', postprocessing: 'argmax' }), x);
    expect(arg.output).toMatchObject({ index: best, label: best });
    expect(arg.output.score).toBeCloseTo(logits[best]!, 5);

    const own = await registry.run(
      config({ model_name: 'classes', postprocessing_params: { output: 'probabilities' } }),
      x,
    );
    (own.output.output as number[]).forEach((p, i) => expect(p).toBeCloseTo(probabilities[i]!, 6));

    const missing = await rejection(
      registry.run(config({ model_name: 'classes', postprocessing_params: { output: 'nope' } }), x),
    );
    expect(missing.message).toBe("the model has no output 'nope' (outputs: logits, probabilities)");
  });

  it('feeds named inputs from an object and rejects missing or unknown names', async () => {
    folder.write('sum.onnx', sumModel(2));
    const result = await registry.run(config({ model_name: 'sum' }), { a: [1, 2], b: [10, 20] });
    expect(result.output).toEqual({ output: [11, 22] });
    const wrong = await rejection(
      registry.run(config({ model_name: 'sum' }), { a: [1, 2], c: [1, 2] }),
    );
    expect(wrong.message).toBe(
      "features must hold exactly the model's inputs (a, b); missing b; unknown c",
    );
    const flat = await rejection(registry.run(config({ model_name: 'sum' }), [1, 2]));
    expect(flat.message).toContain('the model has 2 inputs (a, b)');
  });

  it('preprocesses: normalize standardises, resize samples to the declared shape', async () => {
    folder.write('identity4.onnx', identityModel(['N', 4]));
    const normalized = await registry.run(
      config({ model_name: 'identity4', preprocessing: 'normalize' }),
      [2, 4, 6, 8],
    );
    const s = Math.sqrt(5);
    (normalized.output.output as number[]).forEach((v, i) =>
      expect(v).toBeCloseTo([-3 / s, -1 / s, 1 / s, 3 / s][i]!, 6),
    );
    folder.write('image.onnx', identityModel([1, 2, 2]));
    const image = [
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10, 11, 12],
      [13, 14, 15, 16],
    ];
    const resized = await registry.run(
      config({ model_name: 'image', preprocessing: 'resize' }),
      image,
    );
    expect(resized.output).toEqual({
      output: [
        [1, 3],
        [9, 11],
      ],
    });
    const unresized = await rejection(registry.run(config({ model_name: 'image' }), image));
    expect(unresized.message).toBe("features has shape [4, 4]; model input 'x' expects [1, 2, 2]");
  });

  it('converts JSON numbers to integer input types, rejecting fractions', async () => {
    folder.write('ids.onnx', identityModel(['N', 3], 'int64'));
    const ok = await registry.run(config({ model_name: 'ids' }), [1, -2, 2 ** 40]);
    expect(ok.output).toEqual({ output: [1, -2, 2 ** 40] });
    const fraction = await rejection(registry.run(config({ model_name: 'ids' }), [1, 2.5, 3]));
    expect(fraction.code).toBe('INFERENCE_INPUT_INVALID');
    expect(fraction.message).toContain('element 1 (2.5)');
    folder.write('bytes.onnx', identityModel([2], 'uint8'));
    const range = await rejection(registry.run(config({ model_name: 'bytes' }), [1, 256]));
    expect(range.message).toContain('not an integer in 0..255');
  });

  it('rejects a non-finite model output', async () => {
    folder.write('log.onnx', logModel(2));
    const error = await rejection(registry.run(config({ model_name: 'log' }), [1, 0]));
    expect(error.code).toBe('INFERENCE_OUTPUT_INVALID');
  });

  it('loads a session once and reuses it, reloading only when the file changes', async () => {
    const { provider, counts } = countingOnnx();
    const counted = createModelRegistry({
      modelsDir: folder.dir,
      root: folder.dir,
      providers: { onnx: provider },
    });
    try {
      const first = await counted.loadModel({ name: 'fraud', runtime: 'onnx' });
      await Promise.all(
        Array.from({ length: 5 }, () => counted.run(config({ model_name: 'fraud' }), [1, 1, 1, 1])),
      );
      expect(await counted.loadModel({ name: 'fraud', runtime: 'onnx' })).toBe(first);
      // the same file by model_path is the same session
      await counted.run(config({ model_name: 'other', model_path: 'fraud.onnx' }), [1, 1, 1, 1]);
      expect(counts).toEqual({ loads: 1, closes: 0 });

      const path = folder.write('fraud.onnx', logisticRegressionModel([0, 0, 0, 0], 0));
      utimesSync(path, new Date(), new Date(Date.now() + 10_000));
      const after = await counted.run(config({ model_name: 'fraud' }), [1, 1, 1, 1]);
      expect(after.output).toEqual({ output: [0.5] });
      expect(after.model).not.toBe(first);
      expect(counts).toEqual({ loads: 2, closes: 1 });
    } finally {
      await counted.close();
    }
    expect(counts).toEqual({ loads: 2, closes: 2 });
  });

  it('close() releases every session; later runs fail with INFERENCE_CLOSED', async () => {
    const { provider, counts } = countingOnnx();
    const own = createModelRegistry({ modelsDir: folder.dir, providers: { onnx: provider } });
    const handle = await own.loadModel({ name: 'fraud', runtime: 'onnx' });
    await own.loadModel({ name: 'classes', runtime: 'onnx' });
    await own.close();
    expect(counts).toEqual({ loads: 2, closes: 2 });
    expect((await rejection(own.run(config({ model_name: 'fraud' }), [1, 1, 1, 1]))).code).toBe(
      'INFERENCE_CLOSED',
    );
    const direct = await rejection(
      handle.model.run([1, 1, 1, 1], {
        context: { modelName: 'fraud', signal: AbortSignal.abort() },
      }),
    );
    expect(direct.code).toBe('INFERENCE_CLOSED');
  });

  it('reports missing, corrupt and escaping model files', async () => {
    const missing = await rejection(registry.run(config({ model_name: 'nope' }), [1]));
    expect(missing.code).toBe('MODEL_NOT_FOUND');
    expect(missing.message).toBe(`model 'nope': no file ${join(folder.dir, 'nope.onnx')}`);

    const { provider, counts } = countingOnnx();
    const counted = createModelRegistry({ modelsDir: folder.dir, providers: { onnx: provider } });
    try {
      folder.write('corrupt.onnx', 'this is not a protobuf');
      const corrupt = await rejection(counted.run(config({ model_name: 'corrupt' }), [1]));
      expect(corrupt.code).toBe('MODEL_LOAD_FAILED');
      expect(corrupt.message).toContain(
        `cannot load onnx model 'corrupt' from ${join(folder.dir, 'corrupt.onnx')}`,
      );
      // a failed file stays failed (no reload per call) until it changes
      expect((await rejection(counted.run(config({ model_name: 'corrupt' }), [1]))).code).toBe(
        'MODEL_LOAD_FAILED',
      );
      expect(counts.loads).toBe(1);
    } finally {
      await counted.close();
    }

    const escape = await rejection(
      registry.run(config({ model_name: 'x', model_path: '../elsewhere/fraud.onnx' }), [1]),
    );
    expect(escape.code).toBe('MODEL_PATH_INVALID');
    const outside = modelFolder();
    try {
      outside.write('secret.onnx', logisticRegressionModel([1], 0));
      symlinkSync(join(outside.dir, 'secret.onnx'), join(folder.dir, 'link.onnx'));
      const link = await rejection(registry.run(config({ model_name: 'link' }), [1]));
      expect(link.code).toBe('MODEL_PATH_INVALID');
      expect(link.message).toContain('is outside the models directory');
    } finally {
      outside.remove();
    }
    expect(
      (await rejection(registry.run(config({ model_name: '../fraud' }), [1, 1, 1, 1]))).code,
    ).toBe('MODEL_PATH_INVALID');
    const noDir = createModelRegistry();
    expect((await rejection(noDir.run(config({ model_name: 'fraud' }), [1]))).message).toContain(
      'no models directory is configured',
    );
    await noDir.close();
  });
});

describe('model registry: custom models, timeouts, providers', () => {
  it('runs custom functions with the (preprocessed) input and a context', async () => {
    const seen: unknown[] = [];
    const registry = createModelRegistry({
      custom: {
        rules: (input, context) => {
          seen.push(input, context.modelName, context.stepName);
          (input as number[]).push(99); // must not leak into the caller's value
          return { risk: 'low' };
        },
      },
    });
    const features = [1, 3];
    const result = await registry.run(
      config({ model_name: 'rules', runtime: 'custom', preprocessing: 'normalize' }),
      features,
      { stepName: 'score' },
    );
    expect(result.output).toEqual({ output: { risk: 'low' } });
    expect(seen).toEqual([[-1, 1, 99], 'rules', 'score']);
    expect(features).toEqual([1, 3]);
    const missing = await rejection(
      registry.run(config({ model_name: 'other', runtime: 'custom' }), 1),
    );
    expect(missing.message).toBe("no custom model 'other' is registered (registered: rules)");
    registry.registerCustom('other', () => [0.1, 0.9]);
    expect(
      (
        await registry.run(
          config({ model_name: 'other', runtime: 'custom', postprocessing: 'argmax' }),
          1,
        )
      ).output,
    ).toEqual({ index: 1, label: 1, score: 0.9 });
    await registry.close();
  });

  it('times out a run that never resolves, aborting its signal', async () => {
    let signal: AbortSignal | undefined;
    const registry = createModelRegistry({
      custom: {
        hang: (_input, context) => {
          signal = context.signal;
          return new Promise(() => {});
        },
      },
    });
    const error = await rejection(
      registry.run(config({ model_name: 'hang', runtime: 'custom', timeout_ms: 20 }), [1]),
    );
    expect(error.code).toBe('INFERENCE_TIMEOUT');
    expect(error.message).toBe("custom model 'hang' gave no result within 20 ms");
    expect(error.retryable).toBe(true);
    expect(signal?.aborted).toBe(true);
    await registry.close();
  });

  it('treats a result that arrives after timeout_ms as a timeout (a blocking run)', async () => {
    const registry = createModelRegistry({
      custom: {
        busy: () => {
          const until = performance.now() + 30;
          while (performance.now() < until); // blocks the event loop, as a native run does
          return [1];
        },
      },
    });
    const error = await rejection(
      registry.run(config({ model_name: 'busy', runtime: 'custom', timeout_ms: 5 }), [1]),
    );
    expect(error.code).toBe('INFERENCE_TIMEOUT');
    await registry.close();
  });

  it('has no tflite provider unless one is registered', async () => {
    const plain = createModelRegistry();
    expect(plain.runtimes()).toEqual(['onnx', 'custom']);
    const error = await rejection(plain.run(config({ model_name: 'm', runtime: 'tflite' }), [1]));
    expect(error.code).toBe('INFERENCE_RUNTIME_UNAVAILABLE');
    expect(error.message).toContain('Node has no maintained TensorFlow Lite runtime');
    await plain.close();

    const folder = modelFolder();
    folder.write('m.tflite', 'tflite bytes');
    const seen: string[] = [];
    const tflite: InferenceProvider = {
      fileExtension: '.tflite',
      load: ({ file }) => {
        seen.push(Buffer.from(file!.bytes).toString());
        return Promise.resolve({
          inputs: [],
          outputs: [],
          run: (input) => Promise.resolve({ kind: 'value', value: [(input as number[])[0]! * 2] }),
          close: () => Promise.resolve(),
        });
      },
    };
    const withTflite = createModelRegistry({ modelsDir: folder.dir, providers: { tflite } });
    expect(withTflite.runtimes()).toEqual(['tflite', 'onnx', 'custom']);
    const result = await withTflite.run(config({ model_name: 'm', runtime: 'tflite' }), [21]);
    expect(result.output).toEqual({ output: [42] });
    expect(seen).toEqual(['tflite bytes']);
    await withTflite.close();
    folder.remove();
  });
});
