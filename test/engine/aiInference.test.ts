/**
 * AI_INFERENCE inside real workflows, on every store dialect: ONNX models built at test time,
 * routing on their results, every fallback path, custom functions, session reuse across
 * workflows, model_path resolution and the tflite rule.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import {
  DefinitionError,
  loadDefinition,
  onnxProvider,
  type InferenceProvider,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import {
  dot,
  linearClassifierModel,
  logisticRegressionModel,
  modelFolder,
  sigmoid,
  type ModelFolder,
} from '../support/onnxModels.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const WEIGHTS = [0.9, -0.5, 2, 0.03];
const BIAS = -2;
const HIGH = [3, 0.5, 1.2, 40]; // z = 2.7 - 0.25 + 2.4 + 1.2 - 2 = 4.05
const LOW = [0.2, 3, 0.1, 1];

const fraudFlow = `
workflow_type: fraud_check
automate_next: true
steps:
  - name: score
    type: AI_INFERENCE
    ai_config:
      model_name: fraud
      runtime: onnx
      input_source: transaction.features
      postprocessing: threshold
      threshold: 0.8
      postprocessing_params: { labels: [ok, fraud] }
  - name: route
    type: DECISION
    function: steps.noop
    routes:
      - { condition: "inference_result.label == 'fraud'", target: review }
      - { default: finish }
  - { name: review, type: STANDARD, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`;

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
        ...model,
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

for (const dialect of DIALECTS) {
  describe(`AI_INFERENCE on ${dialect.name}`, () => {
    let handle: TestStore;
    let folder: ModelFolder;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      folder = modelFolder();
      folder.write('fraud.onnx', logisticRegressionModel(WEIGHTS, BIAS));
      rt = engineFor(handle, {
        inference: {
          modelsDir: folder.dir,
          custom: { hang: () => new Promise(() => {}) },
        },
      });
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
      folder.remove();
    });

    const failure = async (wf: WorkflowRecord) =>
      (await rt.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED')?.eventData.error as {
        code: string;
        message: string;
        step: string;
      };

    it('scores a transaction with an ONNX model and routes on the result', async () => {
      const def = await definition(fraudFlow);
      const high = await rt.start(def, { transaction: { features: HIGH } });
      const low = await rt.start(def, { transaction: { features: LOW } });
      const expectedHigh = sigmoid(dot(WEIGHTS, HIGH) + BIAS);
      const expectedLow = sigmoid(dot(WEIGHTS, LOW) + BIAS);
      expect(expectedHigh).toBeGreaterThan(0.8);
      expect(expectedLow).toBeLessThan(0.8);
      expect(high).toMatchObject({
        status: 'COMPLETED',
        state: { inference_result: { label: 'fraud' }, visited: ['review', 'finish'] },
      });
      expect(low).toMatchObject({
        status: 'COMPLETED',
        state: { inference_result: { label: 'ok' }, visited: ['finish'] },
      });
      const score = (wf: WorkflowRecord) => (wf.state.inference_result as { score: number }).score;
      expect(score(high)).toBeCloseTo(expectedHigh, 6);
      expect(score(low)).toBeCloseTo(expectedLow, 6);
      // the result survives a reload from the store
      expect((await rt.get(high.id)).state.inference_result).toEqual(high.state.inference_result);
      const logs = await handle.store.db
        .selectFrom('workflow_execution_logs')
        .select(['level', 'message', 'step_name'])
        .where('workflow_id', '=', high.id)
        .execute();
      expect(logs).toEqual([
        {
          level: 'info',
          message: expect.stringMatching(/^onnx model 'fraud' ran in [\d.]+ ms$/) as string,
          step_name: 'score',
        },
      ]);
    });

    it('classifies into three labelled classes, writing to output_key', async () => {
      const weights = [
        [1, 0],
        [0, 1],
        [-1, -1],
      ];
      const bias = [0, 0.5, 0.2];
      folder.write('merchant_class.onnx', linearClassifierModel(weights, bias));
      const def = await definition(`
workflow_type: classify
steps:
  - name: classify
    type: AI_INFERENCE
    ai_config:
      model_name: merchant_class
      runtime: onnx
      input_source: signals
      output_key: merchant_risk
      postprocessing: softmax
      postprocessing_params: { labels: [low, medium, high] }
`);
      const x = [0.3, 1.1];
      const wf = await rt.start(def, { signals: x });
      const logits = weights.map((w, c) => dot(w, x) + bias[c]!);
      const exps = logits.map(Math.exp);
      const total = exps.reduce((a, b) => a + b, 0);
      const risk = wf.state.merchant_risk as { probabilities: number[] };
      expect(wf.status).toBe('COMPLETED');
      expect(wf.state).not.toHaveProperty('inference_result');
      expect(risk).toMatchObject({ index: 1, label: 'medium' });
      risk.probabilities.forEach((p, i) => expect(p).toBeCloseTo(exps[i]! / total, 6));
    });

    describe('fallback_on_error', () => {
      const causes = {
        'missing model': {
          model: 'absent',
          runtime: 'onnx',
          data: { f: HIGH },
          reason: 'MODEL_NOT_FOUND',
        },
        'bad input shape': {
          model: 'fraud',
          runtime: 'onnx',
          data: { f: [1, 2, 3] },
          reason: 'INFERENCE_INPUT_INVALID',
        },
        'non-numeric input': {
          model: 'fraud',
          runtime: 'onnx',
          data: { f: [1, 'x', 3, 4] },
          reason: 'INFERENCE_INPUT_INVALID',
        },
        'missing input': {
          model: 'fraud',
          runtime: 'onnx',
          data: {},
          reason: 'INFERENCE_INPUT_INVALID',
        },
        timeout: {
          model: 'hang',
          runtime: 'custom',
          data: { f: HIGH },
          reason: 'INFERENCE_TIMEOUT',
        },
        'corrupt model file': {
          model: 'corrupt',
          runtime: 'onnx',
          data: { f: HIGH },
          reason: 'MODEL_LOAD_FAILED',
        },
      } as const;

      const flow = (model: string, runtime: string, fallback: string | undefined) =>
        definition(`
workflow_type: fallback_${fallback ?? 'absent'}
automate_next: true
steps:
  - name: score
    type: AI_INFERENCE
    ai_config:
      model_name: ${model}
      runtime: ${runtime}
      input_source: f
      timeout_ms: 20
      postprocessing: threshold
${fallback === undefined ? '' : `      fallback_on_error: ${fallback}`}
      default_result: { score: 0, label: false, fallback: true }
  - { name: after, type: STANDARD, function: steps.mark }
`);

      for (const [cause, { model, runtime, data, reason }] of Object.entries(causes)) {
        it(`${cause}: fail names step, model and cause; skip writes {}; default writes default_result`, async () => {
          folder.write('corrupt.onnx', 'not an onnx model');
          for (const fallback of [undefined, 'fail']) {
            const failed = await rt.start(await flow(model, runtime, fallback), data);
            expect(failed.status).toBe('FAILED');
            const error = await failure(failed);
            expect(error).toMatchObject({ code: 'AI_INFERENCE_FAILED', step: 'score' });
            expect(error.message).toMatch(
              new RegExp(`^step 'score': ${runtime} model '${model}' failed \\(${reason}\\): .+`),
            );
            expect(failed.state).not.toHaveProperty('inference_result');
          }

          const skipped = await rt.start(await flow(model, runtime, 'skip'), data);
          expect(skipped).toMatchObject({ status: 'COMPLETED', state: { visited: ['after'] } });
          expect(skipped.state.inference_result).toEqual({});
          const defaulted = await rt.start(await flow(model, runtime, 'default'), data);
          expect(defaulted).toMatchObject({ status: 'COMPLETED', state: { visited: ['after'] } });
          expect(defaulted.state.inference_result).toEqual({
            score: 0,
            label: false,
            fallback: true,
          });
          const warnings = await handle.store.db
            .selectFrom('workflow_execution_logs')
            .select(['level', 'message'])
            .where('workflow_id', 'in', [skipped.id, defaulted.id])
            .where('step_name', '=', 'score')
            .execute();
          expect(warnings).toHaveLength(2);
          for (const w of warnings) {
            expect(w.level).toBe('warn');
            expect(w.message).toContain(`failed (${reason})`);
          }
        });
      }
    });

    it('loads a model once for all steps and workflows; close() releases it', async () => {
      const { provider, counts } = countingOnnx();
      const own = engineFor(handle, {
        inference: { modelsDir: folder.dir, providers: { onnx: provider } },
      });
      const def = await definition(`
workflow_type: twice
automate_next: true
steps:
  - { name: first, type: AI_INFERENCE, ai_config: { model_name: fraud, runtime: onnx, input_source: f, output_key: a } }
  - { name: second, type: AI_INFERENCE, ai_config: { model_name: fraud, runtime: onnx, input_source: f, output_key: b } }
`);
      const runs = await Promise.all([1, 2, 3].map(() => own.start(def, { f: LOW })));
      for (const wf of runs) {
        expect(wf.status).toBe('COMPLETED');
        expect(wf.state.a).toEqual(wf.state.b);
      }
      expect(counts).toEqual({ loads: 1, closes: 0 });
      await own.close();
      expect(counts).toEqual({ loads: 1, closes: 1 });
    });

    it('runs custom models registered at creation or later', async () => {
      const def = await definition(`
workflow_type: custom_rules
automate_next: true
steps:
  - name: rules
    type: AI_INFERENCE
    ai_config: { model_name: velocity, runtime: custom, input_source: card, postprocessing: argmax, postprocessing_params: { labels: [allow, block] } }
`);
      const missing = await rt.start(def, { card: { uses_last_hour: 9 } });
      expect(await failure(missing)).toMatchObject({ code: 'AI_INFERENCE_FAILED' });
      rt.inference.registerCustom('velocity', (input) => {
        const uses = (input as { uses_last_hour: number }).uses_last_hour;
        return uses > 5 ? [0.1, 0.9] : [0.9, 0.1];
      });
      const blocked = await rt.start(def, { card: { uses_last_hour: 9 } });
      const allowed = await rt.start(def, { card: { uses_last_hour: 1 } });
      expect(blocked.state.inference_result).toEqual({ index: 1, label: 'block', score: 0.9 });
      expect(allowed.state.inference_result).toEqual({ index: 0, label: 'allow', score: 0.9 });
    });

    it('applies timeout_ms to custom models, slow or blocking, in a running workflow', async () => {
      const def = await definition(`
workflow_type: custom_slow
automate_next: true
steps:
  - name: rules
    type: AI_INFERENCE
    ai_config: { model_name: slow, runtime: custom, input_source: card, timeout_ms: 200 }
  - name: blocking
    type: AI_INFERENCE
    ai_config: { model_name: blocking, runtime: custom, input_source: card, timeout_ms: 200 }
`);
      let slowFinished = false;
      rt.inference.registerCustom(
        'slow',
        () =>
          new Promise((resolve) =>
            setTimeout(() => {
              slowFinished = true;
              resolve([0.5]);
            }, 1_500),
          ),
      );
      const slow = await rt.start(def, { card: { uses_last_hour: 9 } });
      expect(slow.status).toBe('FAILED');
      expect(slow.state.inference_result).toBeUndefined();
      expect(slowFinished).toBe(false);
      expect(await failure(slow)).toMatchObject({ code: 'AI_INFERENCE_FAILED', step: 'rules' });
      expect((await failure(slow)).message).toContain('INFERENCE_TIMEOUT');

      rt.inference.registerCustom('slow', () => [0.5]);
      rt.inference.registerCustom('blocking', () => {
        const until = Date.now() + 1_500;
        while (Date.now() < until);
        return [0.5];
      });
      const blocking = await rt.start(def, { card: { uses_last_hour: 9 } });
      expect(blocking.status).toBe('FAILED');
      expect(await failure(blocking)).toMatchObject({
        code: 'AI_INFERENCE_FAILED',
        step: 'blocking',
      });
      expect((await failure(blocking)).message).toContain('INFERENCE_TIMEOUT');
    });

    it('resolves model_path under the steps root', async () => {
      mkdirSync(join(folder.dir, 'models'));
      folder.write('models/fraud_v2.onnx', logisticRegressionModel([1, 1, 1, 1], 0));
      const own = engineFor(handle, { stepsRoot: folder.dir });
      try {
        const { definition: def } = await loadDefinition(`
workflow_type: by_path
steps:
  - name: score
    type: AI_INFERENCE
    ai_config: { model_name: fraud_v2, runtime: onnx, input_source: f, model_path: models/fraud_v2.onnx }
`);
        const wf = await own.start(def, { f: [0.5, 0.5, -1, 0] });
        expect(wf.status).toBe('COMPLETED');
        expect((wf.state.inference_result as { output: number[] }).output[0]).toBeCloseTo(0.5, 6);
      } finally {
        await own.close();
      }
    });

    it('rejects tflite definitions unless the runtime has a tflite provider', async () => {
      const file = join(folder.dir, 'edge_fraud.yaml');
      writeFileSync(
        file,
        `
workflow_type: edge_fraud
steps:
  - name: score
    type: AI_INFERENCE
    ai_config: { model_name: fraud, runtime: tflite, input_source: f, postprocessing: threshold }
`,
      );
      const rejected = await rt.registry.registerFile(file).catch((e: unknown) => e);
      expect(rejected).toBeInstanceOf(DefinitionError);
      expect((rejected as DefinitionError).issues[0]).toMatchObject({
        code: 'AI_RUNTIME_UNAVAILABLE',
        path: 'steps[0].ai_config.runtime',
        line: 6,
      });

      folder.write('fraud.tflite', 'opaque tflite bytes');
      const tflite: InferenceProvider = {
        fileExtension: '.tflite',
        load: () =>
          Promise.resolve({
            inputs: [],
            outputs: [],
            run: (input) => Promise.resolve({ kind: 'value', value: [(input as number[])[0]!] }),
            close: () => Promise.resolve(),
          }),
      };
      const edge = engineFor(handle, {
        inference: { modelsDir: folder.dir, providers: { tflite } },
      });
      try {
        await edge.registry.registerFile(file);
        const wf = await edge.start('edge_fraud', { f: [0.93] });
        expect(wf.state.inference_result).toEqual({ score: 0.93, label: true });
        // a tflite definition that reached a runtime without the provider fails the step clearly
        const orphan = await rt.start(edge.registry.get('edge_fraud')!, { f: [0.93] });
        expect((await failure(orphan)).message).toContain('(INFERENCE_RUNTIME_UNAVAILABLE)');
      } finally {
        await edge.close();
      }
    });
  });
}
