import { describe, expect, it } from 'vitest';
import {
  parseDefinitionObject,
  type DefinitionIssue,
  type WorkflowDefinition,
} from '../../runtime/definition/index.js';

type Step = Record<string, unknown>;

function check(steps: Step[], top: Record<string, unknown> = {}) {
  return parseDefinitionObject({ workflow_type: 'Test', steps, ...top });
}

function errors(steps: Step[], top?: Record<string, unknown>): [string, string, string][] {
  return check(steps, top)
    .issues.filter((issue: DefinitionIssue) => issue.severity === 'error')
    .map((issue): [string, string, string] => [issue.code, issue.path, issue.message]);
}

function valid(steps: Step[], top?: Record<string, unknown>): WorkflowDefinition {
  const result = check(steps, top);
  expect(result.issues.filter((issue) => issue.severity === 'error')).toEqual([]);
  if (result.definition === undefined) throw new Error('no definition');
  return result.definition;
}

const std = (name: string, extra: Step = {}): Step => ({
  name,
  type: 'STANDARD',
  function: 'mod.fn',
  ...extra,
});
const decision = (name: string, routes?: unknown[]): Step =>
  routes === undefined
    ? { name, type: 'DECISION', function: 'mod.decide' }
    : { name, type: 'DECISION', function: 'mod.decide', routes };

describe('top level', () => {
  it('requires workflow_type and a non-empty steps list', () => {
    expect(parseDefinitionObject({}).issues.map((i) => [i.code, i.path])).toEqual([
      ['MISSING_FIELD', 'workflow_type'],
      ['MISSING_FIELD', 'steps'],
    ]);
    expect(errors([])).toEqual([['INVALID_LENGTH', 'steps', 'must not be empty']]);
  });

  it('limits workflow_type to 200 and workflow_version to 50 characters', () => {
    expect(errors([std('a')], { workflow_type: 'x'.repeat(201) })[0]?.slice(0, 2)).toEqual([
      'INVALID_LENGTH',
      'workflow_type',
    ]);
    expect(errors([std('a')], { workflow_version: 'v'.repeat(51) })[0]?.[0]).toBe('INVALID_LENGTH');
    expect(valid([std('a')], { workflow_version: 3 }).workflow_version).toBe('3');
  });

  it('rejects unknown top-level keys with a suggestion', () => {
    expect(errors([std('a')], { workflow_typ: 'x', intial_state: {} })).toEqual([
      ['UNKNOWN_KEY', 'workflow_typ', "unknown key 'workflow_typ' (did you mean 'workflow_type'?)"],
      ['UNKNOWN_KEY', 'intial_state', "unknown key 'intial_state' (did you mean 'initial_state'?)"],
    ]);
  });

  it('accepts foreign keys with warnings and without mutating the input', () => {
    const input = {
      workflow_type: 'T',
      initial_state_model: 'x.Model',
      initial_state_model_path: 'x/model.py',
      steps: [std('a', { description: 'd', input_model: 'M', required_input: ['k'] })],
    };
    const result = parseDefinitionObject(input);
    expect(result.issues.map((i) => [i.severity, i.code, i.path])).toEqual([
      ['warning', 'FOREIGN_KEY', 'initial_state_model'],
      ['warning', 'FOREIGN_KEY', 'initial_state_model_path'],
      ['warning', 'FOREIGN_KEY', 'steps[0].description'],
      ['warning', 'FOREIGN_KEY', 'steps[0].input_model'],
      ['warning', 'FOREIGN_KEY', 'steps[0].required_input'],
    ]);
    expect(result.definition?.steps[0]).toEqual({
      name: 'a',
      type: 'STANDARD',
      function: 'mod.fn',
    });
    expect(input.steps[0]).toHaveProperty('description', 'd');
  });

  it('rejects a root that is not a mapping', () => {
    expect(parseDefinitionObject([1, 2]).issues).toEqual([
      expect.objectContaining({ code: 'ROOT_NOT_MAPPING', path: '' }),
    ]);
  });
});

describe('step kinds and fields', () => {
  it('rejects an unknown step type with a suggestion, and a missing type', () => {
    expect(errors([{ name: 'a', type: 'DECISON', function: 'm.f' }])).toEqual([
      [
        'UNKNOWN_STEP_TYPE',
        'steps[0].type',
        "unknown step type 'DECISON' (did you mean 'DECISION'?)",
      ],
    ]);
    expect(errors([{ name: 'a', function: 'm.f' }])[0]?.slice(0, 2)).toEqual([
      'MISSING_FIELD',
      'steps[0].type',
    ]);
  });

  it('allows compensate_function on STANDARD and ASYNC only', () => {
    valid([std('a', { compensate_function: 'm.undo' })]);
    valid([{ name: 'a', type: 'ASYNC', function: 'm.f', compensate_function: 'm.undo' }]);
    const [issue] = errors([
      { name: 'h', type: 'HUMAN_IN_LOOP', function: 'm.f', compensate_function: 'm.undo' },
    ]);
    expect(issue?.[0]).toBe('UNKNOWN_KEY');
    expect(issue?.[1]).toBe('steps[0].compensate_function');
  });

  it('suggests keys of the step kind at hand', () => {
    expect(
      errors([
        {
          name: 'p',
          type: 'PARALLEL',
          tasks: [{ name: 't', function_path: 'm.f' }],
          merge_stratgy: 'DEEP',
        },
      ]),
    ).toEqual([
      [
        'UNKNOWN_KEY',
        'steps[0].merge_stratgy',
        "unknown key 'merge_stratgy' (did you mean 'merge_strategy'?)",
      ],
    ]);
    expect(
      errors([
        {
          name: 'h',
          type: 'HTTP',
          output_key: 'o',
          http_config: { method: 'GET', url: 'u', retry_policy: { max_atempts: 2 } },
        },
      ]),
    ).toEqual([
      [
        'UNKNOWN_KEY',
        'steps[0].http_config.retry_policy.max_atempts',
        "unknown key 'max_atempts' (did you mean 'max_attempts'?)",
      ],
    ]);
  });

  it('validates enums, ranges and types', () => {
    const wasm = (config: Record<string, unknown>): Step => ({
      name: 'w',
      type: 'WASM',
      wasm_config: { wasm_hash: 'a'.repeat(64), ...config },
    });
    expect(errors([wasm({ timeout_ms: 99 })])).toEqual([
      ['OUT_OF_RANGE', 'steps[0].wasm_config.timeout_ms', 'must be at least 100'],
    ]);
    expect(errors([wasm({ timeout_ms: 60_001 })])[0]?.[0]).toBe('OUT_OF_RANGE');
    valid([wasm({ timeout_ms: 100 })]);
    valid([wasm({ timeout_ms: 60_000 })]);
    const upper = valid([wasm({ wasm_hash: 'A'.repeat(32) + 'f'.repeat(32) })]).steps[0];
    expect(upper?.type === 'WASM' && upper.wasm_config.wasm_hash).toBe(
      'a'.repeat(32) + 'f'.repeat(32),
    );
    expect(errors([wasm({ wasm_hash: 'G'.repeat(64) })])[0]?.[0]).toBe('INVALID_FORMAT');
    expect(errors([wasm({ wasm_hash: 'a'.repeat(63) })])[0]?.[0]).toBe('INVALID_FORMAT');
    expect(errors([wasm({ fallback_on_error: 'retry' })])[0]?.[0]).toBe('INVALID_VALUE');
    expect(errors([std('a', { automate_next: 'yes' })])).toEqual([
      ['INVALID_TYPE', 'steps[0].automate_next', 'expected boolean, got string'],
    ]);
    expect(
      errors([
        {
          name: 'ai',
          type: 'AI_INFERENCE',
          ai_config: { model_name: 'm', runtime: 'onx', input_source: 'x' },
        },
      ])[0]?.[2],
    ).toBe("invalid value 'onx'; expected one of tflite, onnx, custom (did you mean 'onnx'?)");
  });

  it('applies AI_INFERENCE defaults and keeps optional keys absent', () => {
    const definition = valid([
      {
        name: 'ai',
        type: 'AI_INFERENCE',
        ai_config: { model_name: 'm', runtime: 'tflite', input_source: 'x', default_result: {} },
      },
    ]);
    expect(definition.steps[0]).toEqual({
      name: 'ai',
      type: 'AI_INFERENCE',
      ai_config: {
        model_name: 'm',
        runtime: 'tflite',
        input_source: 'x',
        output_key: 'inference_result',
        timeout_ms: 5000,
        default_result: {},
      },
    });
  });

  it('warns when fallback_on_error is default without default_result', () => {
    const result = check([
      {
        name: 'w',
        type: 'WASM',
        wasm_config: { wasm_hash: 'b'.repeat(64), fallback_on_error: 'default' },
      },
    ]);
    expect(result.definition).toBeDefined();
    expect(result.issues).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'MISSING_DEFAULT_RESULT' }),
    ]);
  });

  it('requires the fields of each LOOP mode', () => {
    const body = [std('b')];
    expect(
      errors([{ name: 'l', type: 'LOOP', mode: 'WHILE', max_iterations: 3, loop_body: body }]),
    ).toEqual([
      [
        'MISSING_FIELD',
        'steps[0].while_condition',
        "missing required field 'while_condition' (mode WHILE)",
      ],
    ]);
    expect(
      errors([
        { name: 'l', type: 'LOOP', mode: 'ITERATE', max_iterations: 3, loop_body: body },
      ]).map((e) => e[1]),
    ).toEqual(['steps[0].iterate_over', 'steps[0].item_var_name']);
    expect(
      errors([
        { name: 'l', type: 'LOOP', mode: 'WHILE', while_condition: 'x < 3', loop_body: body },
      ]),
    ).toEqual([
      ['MISSING_FIELD', 'steps[0].max_iterations', "missing required field 'max_iterations'"],
    ]);
    expect(
      errors([
        {
          name: 'l',
          type: 'LOOP',
          mode: 'WHILE',
          while_condition: 'x <',
          max_iterations: 2,
          loop_body: body,
        },
      ])[0]?.[0],
    ).toBe('EXPRESSION_SYNTAX');
  });

  it('validates LOOP bodies recursively', () => {
    const inner = {
      name: 'inner',
      type: 'LOOP',
      mode: 'WHILE',
      while_condition: 'true',
      max_iterations: 2,
      loop_body: [{ name: 'x', type: 'STANDARD', functon: 'm.f' }],
    };
    const outer = {
      name: 'outer',
      type: 'LOOP',
      mode: 'WHILE',
      while_condition: 'true',
      max_iterations: 2,
      loop_body: [inner],
    };
    expect(errors([outer]).map((e) => [e[0], e[1]])).toEqual([
      ['MISSING_FIELD', 'steps[0].loop_body[0].loop_body[0].function'],
      ['UNKNOWN_KEY', 'steps[0].loop_body[0].loop_body[0].functon'],
    ]);
  });

  it('checks template syntax in HTTP, FIRE_AND_FORGET and CRON_SCHEDULE steps', () => {
    expect(
      errors([
        {
          name: 'h',
          type: 'HTTP',
          output_key: 'o',
          http_config: { method: 'GET', url: 'u', headers: { 'X-Id': '{{ state.id' } },
        },
        {
          name: 'f',
          type: 'FIRE_AND_FORGET',
          target_workflow_type: 'T',
          initial_data_template: { a: ['{{ }}'] },
        },
        {
          name: 'c',
          type: 'CRON_SCHEDULE',
          schedule_name: 'n-{{ state.x',
          cron_expression: '*/5 * * * *',
          target_workflow_type: 'T',
          initial_data_template: {},
        },
      ]).map((e) => [e[0], e[1]]),
    ).toEqual([
      ['TEMPLATE_SYNTAX', 'steps[0].http_config.headers.X-Id'],
      ['TEMPLATE_SYNTAX', 'steps[1].initial_data_template.a[0]'],
      ['TEMPLATE_SYNTAX', 'steps[2].schedule_name'],
    ]);
  });

  it('checks cron expressions', () => {
    const cron = (expression: string): Step => ({
      name: 'c',
      type: 'CRON_SCHEDULE',
      schedule_name: 'n',
      cron_expression: expression,
      target_workflow_type: 'T',
      initial_data_template: {},
    });
    valid([cron('0 0 * * MON-FRI')]);
    valid([cron('@daily')]);
    expect(errors([cron('every day')])[0]?.slice(0, 2)).toEqual([
      'CRON_INVALID',
      'steps[0].cron_expression',
    ]);
    expect(errors([cron('0 25 * * *')])[0]?.[0]).toBe('CRON_INVALID');
    expect(check([cron('0 0 31 2 *')]).issues).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'CRON_NEVER_FIRES' }),
    ]);
  });

  it('rejects malformed function paths', () => {
    expect(errors([std('a', { function: 'floor_limit' })])[0]?.slice(0, 2)).toEqual([
      'FUNCTION_PATH_INVALID',
      'steps[0].function',
    ]);
    expect(errors([std('a', { function: '../x.js#f' })])[0]?.[0]).toBe('FUNCTION_PATH_INVALID');
    expect(
      errors([
        { name: 'p', type: 'PARALLEL', tasks: [{ name: 't', function_path: 'm.1bad' }] },
      ])[0]?.[1],
    ).toBe('steps[0].tasks[0].function_path');
  });

  it('rejects duplicate PARALLEL task names', () => {
    const tasks = [
      { name: 't', function_path: 'm.a' },
      { name: 't', function_path: 'm.b' },
    ];
    expect(errors([{ name: 'p', type: 'PARALLEL', tasks }])[0]?.slice(0, 2)).toEqual([
      'DUPLICATE_TASK_NAME',
      'steps[0].tasks[1].name',
    ]);
  });
});

describe('routes', () => {
  it('accepts target, next_step and next, and a DECISION without routes', () => {
    const definition = valid([
      decision('d', [
        { condition: 'a > 1', target: 'x' },
        { condition: 'a > 2', next_step: 'y' },
        { condition: 'a > 3', next: 'x' },
        { default: 'y' },
      ]),
      decision('free'),
      std('x'),
      std('y'),
    ]);
    expect(definition.steps[0]).toMatchObject({
      routes: [
        { condition: 'a > 1', target: 'x' },
        { condition: 'a > 2', target: 'y' },
        { condition: 'a > 3', target: 'x' },
        { default: 'y' },
      ],
    });
    expect(definition.steps[1]).not.toHaveProperty('routes');
  });

  it('rejects malformed routes', () => {
    expect(
      errors([
        decision('d', [
          { condition: 'a' },
          { target: 'x' },
          { condition: 'a', target: 'x', next: 'x' },
          { default: 'x', target: 'x' },
          {},
        ]),
        std('x'),
      ]).map((e) => [e[0], e[1]]),
    ).toEqual([
      ['MISSING_FIELD', 'steps[0].routes[0].target'],
      ['MISSING_FIELD', 'steps[0].routes[1].condition'],
      ['CONFLICTING_KEYS', 'steps[0].routes[2].next'],
      ['INVALID_ROUTE', 'steps[0].routes[3].target'],
      ['MISSING_FIELD', 'steps[0].routes[4].condition'],
    ]);
  });

  it('reports unknown targets under the key the author used', () => {
    expect(
      errors([decision('d', [{ condition: 'true', next_step: 'finsh' }]), std('finish')]),
    ).toEqual([
      [
        'UNKNOWN_TARGET',
        'steps[0].routes[0].next_step',
        "unknown step 'finsh' (did you mean 'finish'?)",
      ],
    ]);
  });

  it('reports a second default route and warns about routes after the default', () => {
    const result = check([
      decision('d', [{ default: 'x' }, { condition: 'a', target: 'x' }, { default: 'x' }]),
      std('x'),
    ]);
    expect(result.issues.map((i) => [i.severity, i.code, i.path])).toEqual([
      ['warning', 'UNREACHABLE_ROUTE', 'steps[0].routes[1]'],
      ['error', 'DUPLICATE_DEFAULT_ROUTE', 'steps[0].routes[2].default'],
    ]);
  });

  it('reports the column of a condition that does not parse', () => {
    const [issue] = errors([decision('d', [{ condition: 'state.a = 1', target: 'd' }])]);
    expect(issue?.[0]).toBe('EXPRESSION_SYNTAX');
    expect(issue?.[2]).toMatch(/column 9/);
  });

  it('lets a loop body jump out of its loop but not into a loop body', () => {
    const loop = (body: Step[]): Step => ({
      name: 'l',
      type: 'LOOP',
      mode: 'WHILE',
      while_condition: 'true',
      max_iterations: 2,
      loop_body: body,
    });
    valid([loop([decision('inner', [{ default: 'after' }])]), std('after')]);
    expect(errors([decision('d', [{ default: 'inner' }]), loop([std('inner')])])).toEqual([
      [
        'UNKNOWN_TARGET',
        'steps[0].routes[0].default',
        "step 'inner' is inside the body of LOOP 'l' and cannot be a jump target from here",
      ],
    ]);
  });
});

describe('names and dependencies', () => {
  it('rejects duplicate names across LOOP bodies', () => {
    const loop = {
      name: 'l',
      type: 'LOOP',
      mode: 'WHILE',
      while_condition: 'true',
      max_iterations: 2,
      loop_body: [std('a')],
    };
    expect(errors([std('a'), loop])).toEqual([
      [
        'DUPLICATE_STEP_NAME',
        'steps[1].loop_body[0].name',
        "duplicate step name 'a' (also used by the step at steps[0])",
      ],
    ]);
  });

  it('rejects unknown dependencies with a suggestion', () => {
    expect(errors([std('fetch'), std('b', { dependencies: ['fetsh'] })])).toEqual([
      [
        'UNKNOWN_DEPENDENCY',
        'steps[1].dependencies[0]',
        "unknown step 'fetsh' (did you mean 'fetch'?)",
      ],
    ]);
  });

  it('reports each dependency cycle once, with its steps', () => {
    const result = errors([
      std('a', { dependencies: ['c'] }),
      std('b', { dependencies: ['a'] }),
      std('c', { dependencies: ['b'] }),
      std('d', { dependencies: ['d'] }),
      std('e', { dependencies: ['a'] }),
    ]);
    expect(result).toEqual([
      ['CYCLE', 'steps[1].dependencies[0]', 'dependency cycle: a → c → b → a'],
      ['CYCLE', 'steps[3].dependencies[0]', 'dependency cycle: d → d'],
    ]);
  });

  it('rejects a dependency on a step declared later', () => {
    expect(errors([std('a', { dependencies: ['b'] }), std('b')])).toEqual([
      [
        'DEPENDENCY_ORDER',
        'steps[0].dependencies[0]',
        "step 'a' depends on 'b', which is declared after it; steps run in declaration order, so declare 'b' first",
      ],
    ]);
  });

  it('accepts a diamond of dependencies', () => {
    valid([
      std('a'),
      std('b', { dependencies: ['a'] }),
      std('c', { dependencies: ['a'] }),
      std('d', { dependencies: ['b', 'c'] }),
    ]);
  });
});
