/**
 * bench inference: per-call latency (p50/p99) and calls/s of a logistic-regression fraud
 * score (4 features, MatMul + Add + Sigmoid, built with onnx-proto) through the AI_INFERENCE
 * step path — the step dispatcher, input read, model registry (file check, cached session),
 * ONNX Runtime on CPU and threshold postprocessing — one call after another.
 *
 * Baselines, measured in the same run: the same math as a plain JS function (`js_*`, timed in
 * batches of 1,000 because one call is below the timer's resolution), the same JS function
 * as a `runtime: custom` model through the same step path (`custom_step_*`: the step path
 * without ONNX Runtime), and a bare `session.run` on the same model (`ort_session_*`: ONNX
 * Runtime without the step path). No database is involved: a step's commit is measured by
 * `bench engine`.
 */
import { InferenceSession, Tensor } from 'onnxruntime-node';
import {
  createModelRegistry,
  createStepLogger,
  executeStep,
  inlineExecutor,
  mapSecrets,
  noEffects,
  randomIds,
  systemClock,
  type AiInferenceStep,
  type JsonObject,
  type ModelRegistry,
  type StepRun,
} from '../runtime/index.js';
import { dot, logisticRegressionModel, modelFolder, sigmoid } from '../test/support/onnxModels.js';
import { type BenchOptions, type BenchResult, percentile } from './harness.js';

const WEIGHTS = [0.9, -0.5, 2, 0.03];
const BIAS = -2;
const BATCH = 1000;

/** Round to 4 significant digits (latencies here span nanoseconds to milliseconds). */
const sig = (value: number) => Number(value.toPrecision(4));

const fraudScore = (features: readonly number[]) => sigmoid(dot(WEIGHTS, features) + BIAS);

function stepOf(runtime: 'onnx' | 'custom'): AiInferenceStep {
  return {
    name: 'score',
    type: 'AI_INFERENCE',
    ai_config: {
      model_name: 'fraud',
      runtime,
      input_source: 'transaction.features',
      output_key: 'inference_result',
      postprocessing: 'threshold',
      threshold: 0.8,
      timeout_ms: 5000,
    },
  };
}

function stepRun(step: AiInferenceStep, state: JsonObject, inference: ModelRegistry): StepRun {
  const effects = noEffects();
  const controller = new AbortController();
  const secrets = mapSecrets({});
  return {
    definition: {
      workflow_type: 'bench_inference',
      initial_state: {},
      automate_next: false,
      store_and_forward: false,
      steps: [step],
    },
    state,
    context: {
      workflowId: 'bench',
      workflowType: 'bench_inference',
      stepName: step.name,
      attempt: 1,
      idempotencyKey: 'bench:score',
      signal: controller.signal,
      secrets,
      log: createStepLogger(effects, step.name),
    },
    effects,
    executor: inlineExecutor({ stepsRoot: process.cwd() }),
    clock: systemClock,
    ids: randomIds,
    secrets,
    attempt: 0,
    knowsWorkflowType: () => false,
    inference,
  };
}

const sample = (i: number): number[] => [(i % 7) * 0.5, (i % 3) * 0.7, (i % 5) * 0.4, i % 50];

interface Timing {
  p50: number;
  p99: number;
  perS: number;
}

/** Time `count` sequential calls one by one. */
async function timeCalls(count: number, call: (i: number) => Promise<unknown>): Promise<Timing> {
  const latencies: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await call(i);
    latencies.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), perS: count / seconds };
}

/** Time `count` calls in batches of {@link BATCH}; latencies are per-call batch means. */
function timeBatches(count: number, call: (i: number) => number): Timing {
  const means: number[] = [];
  let sink = 0;
  const started = performance.now();
  for (let done = 0; done < count; done += BATCH) {
    const t0 = performance.now();
    for (let i = done; i < done + BATCH; i++) sink += call(i);
    means.push((performance.now() - t0) / BATCH);
  }
  const seconds = (performance.now() - started) / 1000;
  if (Number.isNaN(sink)) throw new Error('unreachable');
  means.sort((a, b) => a - b);
  return { p50: percentile(means, 50), p99: percentile(means, 99), perS: count / seconds };
}

/** Run the inference benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = {
    bench: 'inference',
    metrics: {},
    baselines: {},
    ratios: {},
    notes: [],
  };
  const calls = Math.max(BATCH, Math.round((20_000 * options.scale) / BATCH) * BATCH);
  const warmup = Math.min(2_000, calls);
  const folder = modelFolder();
  const bytes = logisticRegressionModel(WEIGHTS, BIAS);
  folder.write('fraud.onnx', bytes);
  const registry = createModelRegistry({
    modelsDir: folder.dir,
    custom: { fraud: (input) => [fraudScore(input as number[])] },
  });
  const session = await InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  try {
    const viaStep = (step: AiInferenceStep) => async (i: number) => {
      const features = sample(i);
      const outcome = await executeStep(
        step,
        stepRun(step, { transaction: { features } }, registry),
      );
      if (outcome.kind !== 'completed') throw new Error(`bench step ended ${outcome.kind}`);
      const score = (outcome.state.inference_result as { score: number }).score;
      if (Math.abs(score - fraudScore(features)) > 1e-6) {
        throw new Error(`score ${score} differs from ${fraudScore(features)}`);
      }
    };
    const onnxStep = viaStep(stepOf('onnx'));
    const customStep = viaStep(stepOf('custom'));
    const bare = async (i: number) => {
      const out = await session.run({
        features: new Tensor('float32', Float32Array.from(sample(i)), [1, 4]),
      });
      return out.score;
    };

    options.progress(`warm-up: ${warmup} calls of each`);
    for (let i = 0; i < warmup; i++) {
      await onnxStep(i);
      await customStep(i);
      await bare(i);
    }
    timeBatches(warmup, (i) => fraudScore(sample(i)));

    options.progress(`onnx model through the step path: ${calls} calls`);
    const onnx = await timeCalls(calls, onnxStep);
    options.progress(`same function as a custom model through the step path: ${calls} calls`);
    const custom = await timeCalls(calls, customStep);
    options.progress(`bare ONNX Runtime session.run: ${calls} calls`);
    const ort = await timeCalls(calls, bare);
    options.progress(`plain JS function: ${calls * 10} calls`);
    const js = timeBatches(calls * 10, (i) => fraudScore(sample(i)));
    for (const [name, t] of Object.entries({ onnx, custom, ort, js })) {
      options.progress(
        `  ${name}: p50 ${sig(t.p50 * 1000)} µs, p99 ${sig(t.p99 * 1000)} µs, ${Math.round(t.perS)} calls/s`,
      );
    }

    result.metrics.p50_ms = sig(onnx.p50);
    result.metrics.p99_ms = sig(onnx.p99);
    result.metrics.calls_per_s = Math.round(onnx.perS);
    result.baselines.js_p50_ms = sig(js.p50);
    result.baselines.js_calls_per_s = Math.round(js.perS);
    result.baselines.custom_step_p50_ms = sig(custom.p50);
    result.baselines.custom_step_p99_ms = sig(custom.p99);
    result.baselines.custom_step_calls_per_s = Math.round(custom.perS);
    result.baselines.ort_session_p50_ms = sig(ort.p50);
    result.baselines.ort_session_calls_per_s = Math.round(ort.perS);
    result.ratios.calls_vs_js = sig(onnx.perS / js.perS);
    result.ratios.calls_vs_custom_step = sig(onnx.perS / custom.perS);
    result.ratios.calls_vs_ort_session = sig(onnx.perS / ort.perS);
    result.notes.push(
      `${calls} sequential calls each (plain JS: ${calls * 10}, timed in batches of ${BATCH}); onnxruntime-node CPU, 1 intra-op thread`,
    );
  } finally {
    await session.release();
    await registry.close();
    folder.remove();
  }
  return result;
}
