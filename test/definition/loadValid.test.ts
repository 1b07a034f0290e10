import { describe, expect, it } from 'vitest';
import {
  listSteps,
  loadDefinition,
  loadDefinitionFile,
  STEP_KINDS,
  type StepDefinition,
  type WorkflowDefinition,
} from '../../runtime/definition/index.js';
import { fixture } from './fixtures.js';

function step<K extends StepDefinition['type']>(
  definition: WorkflowDefinition,
  name: string,
  type: K,
): Extract<StepDefinition, { type: K }> {
  const found = definition.steps
    .flatMap((s) => (s.type === 'LOOP' ? [s, ...s.loop_body] : [s]))
    .find((s) => s.name === name);
  if (found?.type !== type) throw new Error(`no ${type} step named ${name}`);
  return found as Extract<StepDefinition, { type: K }>;
}

describe('loading the valid fixture', () => {
  it('loads all 11 step kinds with function paths resolved (.js, .mjs, .ts, #)', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'));
    const kinds = new Set(listSteps(definition).map((listed) => listed.type));
    expect([...kinds].sort()).toEqual([...STEP_KINDS].sort());
    expect(definition.workflow_type).toBe('CardPayment');
    expect(definition.workflow_version).toBe('1.0');
    expect(definition.initial_state).toEqual({ currency: 'EUR' });
    expect(definition.automate_next).toBe(true);
    expect(definition.store_and_forward).toBe(true);
    expect(definition.saga_mode).toBe(true);
  });

  it('normalizes route aliases to target', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'));
    expect(step(definition, 'risk_route', 'DECISION').routes).toEqual([
      { condition: 'state.risk_score > 80', target: 'manual_review' },
      { condition: 'amount < 50 and not exists(state.flags)', target: 'run_checks' },
      { condition: 'len(state.items) in [1, 2]', target: 'settle_items' },
      { default: 'run_checks' },
    ]);
  });

  it('applies the spec defaults', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'));
    const parallel = step(definition, 'run_checks', 'PARALLEL');
    expect(parallel).toMatchObject({
      merge_strategy: 'SHALLOW',
      merge_conflict_behavior: 'PREFER_NEW',
      allow_partial_success: false,
      timeout_seconds: 10,
    });
    const http = step(definition, 'notify_issuer', 'HTTP');
    expect(http.http_config.timeout).toBe(30);
    expect(http.http_config.retry_policy).toEqual({ max_attempts: 1, delay_seconds: 5 });
    const ai = step(definition, 'fraud_model', 'AI_INFERENCE').ai_config;
    expect(ai).toMatchObject({
      output_key: 'inference_result',
      timeout_ms: 5000,
      model_path: 'models/fraud_v2.onnx',
      postprocessing_params: { labels: ['ok', 'fraud'] },
    });
    const wasm = step(definition, 'compute_fee', 'WASM');
    expect(wasm.wasm_config).toMatchObject({
      entrypoint: 'execute',
      timeout_ms: 5000,
      fallback_on_error: 'fail',
      state_mapping: { amount: 'amount_cents' },
    });
    expect(wasm.merge_strategy).toBe('SHALLOW');
    expect(wasm.merge_conflict_behavior).toBe('PREFER_NEW');
  });

  it('reports keys borrowed from other engines as warnings and drops them', async () => {
    const { definition, warnings } = await loadDefinitionFile(fixture('payment_flow.yaml'));
    expect(warnings.map((w) => [w.code, w.path, w.line, w.severity])).toEqual([
      ['FOREIGN_KEY', 'initial_state_model', 5, 'warning'],
      ['FOREIGN_KEY', 'steps[0].description', 16, 'warning'],
      ['FOREIGN_KEY', 'steps[0].required_input', 17, 'warning'],
      ['FOREIGN_KEY', 'steps[9].input_model', 88, 'warning'],
    ]);
    expect(definition.steps[0]).not.toHaveProperty('description');
    expect(definition).not.toHaveProperty('initial_state_model');
    expect(definition.description).toBe('Card-present payment with risk checks');
  });

  it('lists steps with their paths, LOOP bodies included', async () => {
    const { definition } = await loadDefinitionFile(fixture('payment_flow.yaml'));
    const listed = listSteps(definition);
    expect(listed).toHaveLength(14);
    expect(listed.map((l) => l.name)).toEqual([
      'validate_card',
      'authorize',
      'risk_route',
      'run_checks',
      'notify_issuer',
      'settle_items',
      'settle_item',
      'poll_settlement',
      'poll_once',
      'spawn_receipt',
      'schedule_reconciliation',
      'manual_review',
      'fraud_model',
      'compute_fee',
    ]);
    expect(listed.find((l) => l.name === 'settle_item')).toMatchObject({
      type: 'STANDARD',
      function: 'payments.checks.settle_item',
      path: 'steps[5].loop_body[0]',
      loopName: 'settle_items',
    });
    expect(listed[0]).toEqual({ ...definition.steps[0], path: 'steps[0]' });
    expect(listed[0]).not.toHaveProperty('loopName');
  });

  it('fills defaults for a minimal definition', async () => {
    const { definition, warnings } = await loadDefinition(
      'workflow_type: Tiny\nsteps:\n  - {name: only, type: STANDARD, function: a.b}\n',
    );
    expect(warnings).toEqual([]);
    expect(definition).toEqual({
      workflow_type: 'Tiny',
      initial_state: {},
      automate_next: false,
      store_and_forward: false,
      steps: [{ name: 'only', type: 'STANDARD', function: 'a.b' }],
    });
  });

  it('keeps a numeric workflow_version as the text written', async () => {
    const load = (version: string) =>
      loadDefinition(
        `workflow_type: T\nworkflow_version: ${version}\nsteps: [{name: s, type: STANDARD, function: a.b}]\n`,
      );
    expect((await load('2')).definition.workflow_version).toBe('2');
    expect((await load('1.10')).definition.workflow_version).toBe('1.10');
    expect((await load('"3.0.1"')).definition.workflow_version).toBe('3.0.1');
  });

  it('skips function resolution without a steps root or when disabled', async () => {
    const yaml = 'workflow_type: T\nsteps: [{name: s, type: STANDARD, function: nowhere.fn}]\n';
    await expect(loadDefinition(yaml)).resolves.toBeDefined();
    await expect(
      loadDefinition(yaml, { stepsRoot: '/nonexistent', resolveFunctions: false }),
    ).resolves.toBeDefined();
    await expect(loadDefinition(yaml, { stepsRoot: '/nonexistent' })).rejects.toMatchObject({
      issues: [expect.objectContaining({ code: 'FUNCTION_NOT_FOUND', line: 2 })],
    });
  });
});
