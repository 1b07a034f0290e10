/** Load-time rules of AI_INFERENCE steps: runtimes with a provider, model paths, params. */
import { describe, expect, it } from 'vitest';
import {
  DefinitionError,
  loadDefinition,
  type DefinitionIssue,
  type WorkflowDefinition,
} from '../../runtime/definition/index.js';

const yaml = (aiConfig: string) => `
workflow_type: scoring
steps:
  - name: score
    type: AI_INFERENCE
    ai_config:
${aiConfig
  .trim()
  .split('\n')
  .map((line) => `      ${line.trim()}`)
  .join('\n')}
`;

async function issues(text: string, options = {}): Promise<DefinitionIssue[]> {
  try {
    return (await loadDefinition(text, options)).warnings;
  } catch (error) {
    if (error instanceof DefinitionError) return error.issues;
    throw error;
  }
}

const brief = (list: DefinitionIssue[]) => list.map((i) => [i.severity, i.code, i.path, i.line]);

describe('AI_INFERENCE definitions', () => {
  it('rejects runtime tflite by default, with the line and what to do instead', async () => {
    const text = yaml(`
      model_name: fraud
      runtime: tflite
      input_source: features
    `);
    const found = await issues(text);
    expect(brief(found)).toEqual([
      ['error', 'AI_RUNTIME_UNAVAILABLE', 'steps[0].ai_config.runtime', 8],
    ]);
    expect(found[0]!.message).toBe(
      "runtime 'tflite' is not available here (available: onnx, custom); Node has no maintained TensorFlow Lite runtime: convert the model to ONNX and use runtime: onnx, or load with a runtime that has a tflite provider (createRuntime({ inference: { providers: { tflite } } }))",
    );
    const { definition } = await loadDefinition(text, { aiRuntimes: ['tflite', 'onnx'] });
    expect(definition.steps[0]).toMatchObject({ ai_config: { runtime: 'tflite' } });
    const onlyOnnx = await issues(
      yaml(`
      model_name: rules
      runtime: custom
      input_source: features
    `),
      { aiRuntimes: ['onnx'] },
    );
    expect(brief(onlyOnnx)).toEqual([
      ['error', 'AI_RUNTIME_UNAVAILABLE', 'steps[0].ai_config.runtime', 8],
    ]);
  });

  it('keeps model_path inside the steps root', async () => {
    const at = (modelPath: string) =>
      issues(
        yaml(`
      model_name: fraud
      runtime: onnx
      input_source: features
      model_path: ${modelPath}
    `),
      );
    expect(brief(await at('../models/fraud.onnx'))).toEqual([
      ['error', 'INVALID_VALUE', 'steps[0].ai_config.model_path', 10],
    ]);
    expect((await at('/etc/models/fraud.onnx'))[0]!.message).toBe(
      "model_path '/etc/models/fraud.onnx' must be relative to the steps root",
    );
    expect(await at('models/../fraud.onnx')).toEqual([]);
    expect((await at('models/../../fraud.onnx'))[0]!.message).toBe(
      "model_path 'models/../../fraud.onnx' leaves the steps root",
    );
  });

  it('checks input_source and postprocessing_params, warning about unknown params', async () => {
    const found = await issues(
      yaml(`
      model_name: fraud
      runtime: onnx
      input_source: "features[oops"
      postprocessing: threshold
      postprocessing_params: { labels: [a, b, c], lables: [x] }
    `),
    );
    expect(brief(found)).toEqual([
      ['error', 'INVALID_FORMAT', 'steps[0].ai_config.input_source', 9],
      ['error', 'INVALID_LENGTH', 'steps[0].ai_config.postprocessing_params.labels', 11],
      ['warning', 'UNKNOWN_KEY', 'steps[0].ai_config.postprocessing_params.lables', 11],
    ]);
    expect(found[2]!.message).toBe(
      "unknown postprocessing_params key 'lables' is ignored (did you mean 'labels'?)",
    );

    const { definition, warnings } = await loadDefinition(
      yaml(`
      model_name: fraud
      runtime: onnx
      input_source: state.transaction.features
      postprocessing: argmax
      postprocessing_params: { labels: [ok, review, fraud], top_k: 2 }
    `),
    );
    expect(brief(warnings)).toEqual([
      ['warning', 'UNKNOWN_KEY', 'steps[0].ai_config.postprocessing_params.top_k', 11],
    ]);
    const step = definition.steps[0] as Extract<
      WorkflowDefinition['steps'][number],
      { type: 'AI_INFERENCE' }
    >;
    expect(step.ai_config.postprocessing_params).toEqual({ labels: ['ok', 'review', 'fraud'] });
  });

  it('warns that runtime custom ignores model_path', async () => {
    const found = await issues(
      yaml(`
      model_name: rules
      runtime: custom
      input_source: features
      model_path: rules.onnx
    `),
    );
    expect(brief(found)).toEqual([
      ['warning', 'INVALID_VALUE', 'steps[0].ai_config.model_path', 10],
    ]);
  });
});
