import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DefinitionError,
  loadDefinition,
  loadDefinitionFile,
  type DefinitionIssue,
} from '../../runtime/definition/index.js';
import { fixture } from './fixtures.js';

async function issuesOf(promise: Promise<unknown>): Promise<DefinitionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof DefinitionError)) throw new Error('expected a DefinitionError');
  return error;
}

/** `[line, code]` pairs from `# expect: CODE` comments in a fixture. */
function expectedFromComments(text: string): [number, string][] {
  return text.split('\n').flatMap((line, index): [number, string][] => {
    const match = /# expect: (\w+)/.exec(line);
    return match?.[1] === undefined ? [] : [[index + 1, match[1]]];
  });
}

describe('the broken fixture', () => {
  const file = fixture('broken.yaml');

  it('reports every problem, each at its line, and nothing else', async () => {
    const error = await issuesOf(loadDefinitionFile(file));
    const expected = expectedFromComments(readFileSync(file, 'utf8'));
    expect(expected.length).toBeGreaterThanOrEqual(12);
    const actual = error.issues
      .filter((issue) => issue.severity === 'error')
      .map((issue): [number, string] => [issue.line ?? -1, issue.code]);
    expect(actual).toEqual(expected);
    expect(error.code).toBe('DEFINITION_INVALID');
    expect(error.name).toBe('DefinitionError');
    expect(error.file).toBe(file);
  });

  it('explains each problem with paths, suggestions and columns', async () => {
    const error = await issuesOf(loadDefinitionFile(file));
    const byPath = new Map(error.issues.map((issue) => [issue.path, issue]));
    const message = (path: string): string | undefined => byPath.get(path)?.message;
    expect(message('steps[0].fucntion')).toBe("unknown key 'fucntion' (did you mean 'function'?)");
    expect(byPath.get('steps[0].fucntion')?.column).toBe(5);
    expect(message('steps[0].function')).toBe("missing required field 'function'");
    expect(message('steps[1].type')).toBe(
      "unknown step type 'STANDRAD' (did you mean 'STANDARD'?)",
    );
    expect(message('steps[2].output_key')).toBe("missing required field 'output_key'");
    expect(message('steps[2].http_config.method')).toContain("(did you mean 'PATCH'?)");
    expect(message('steps[2].http_config.url')).toMatch(/template/);
    expect(message('steps[3].routes[0].condition')).toMatch(/at column 21/);
    expect(message('steps[3].routes[1].default')).toBe(
      "unknown step 'aprove' (did you mean 'approve'?)",
    );
    expect(message('steps[4].function')).toBe(
      "module payments/checks.js has no export 'no_such_check' (exports: floor_limit, poll, release_card, settle_item, validate_card, velocity)",
    );
    expect(message('steps[5].dependencies[0]')).toBe('dependency cycle: step_a → step_b → step_a');
    expect(message('steps[6].cron_expression')).toMatch(
      /^invalid cron expression '61 \* \* \* \*'/,
    );
    expect(message('steps[7].item_var_name')).toMatch(/missing required field 'item_var_name'/);
    expect(message('steps[7].loop_body[0].name')).toMatch(/duplicate step name 'validate'/);
    expect(message('steps[7].loop_body[0].wasm_config.wasm_hash')).toMatch(/64 hex characters/);
    expect(message('steps[8].compensate_function')).toMatch(/belongs to STANDARD, ASYNC/);
  });

  it('formats the error message one issue per line with file:line:column', async () => {
    const error = await issuesOf(loadDefinitionFile(file));
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(`${file}: invalid workflow definition, 15 errors`);
    expect(lines).toContain(
      `${file}:21:18 steps[3].routes[1].default: unknown step 'aprove' (did you mean 'approve'?)`,
    );
    expect(lines).toHaveLength(error.issues.length + 1);
  });

  it('still reports schema and cross-check errors without a steps root', async () => {
    const text = readFileSync(file, 'utf8');
    const error = await issuesOf(loadDefinition(text, { file: 'broken.yaml' }));
    const codes = error.issues.map((issue: DefinitionIssue) => issue.code);
    expect(codes).not.toContain('FUNCTION_NOT_FOUND');
    expect(codes).toContain('CYCLE');
    expect(error.message).toContain('broken.yaml:33:22 steps[6].cron_expression');
  });
});

describe('malformed YAML', () => {
  it('reports a syntax error with its line (fixture)', async () => {
    const error = await issuesOf(loadDefinitionFile(fixture('malformed-yaml.txt')));
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]).toMatchObject({ code: 'YAML_SYNTAX', severity: 'error', line: 9 });
  });

  it('reports duplicate keys with the line of the second key', async () => {
    const error = await issuesOf(
      loadDefinition('workflow_type: A\nsteps: []\nworkflow_type: B\n', { file: 'dup.yaml' }),
    );
    expect(error.issues).toEqual([
      expect.objectContaining({ code: 'DUPLICATE_KEY', line: 3, column: 1 }),
    ]);
    expect(error.message).toContain('dup.yaml:3:1');
  });

  it('reports tabs used as indentation and unterminated quotes', async () => {
    const tabs = await issuesOf(loadDefinition('workflow_type: A\nsteps:\n\t- name: x\n'));
    expect(tabs.issues[0]).toMatchObject({ code: 'YAML_SYNTAX', line: 3 });
    const quote = await issuesOf(loadDefinition('workflow_type: "A\nsteps: []\n'));
    expect(quote.issues[0]?.code).toBe('YAML_SYNTAX');
  });

  it.each([
    ['a list', '- a\n- b\n'],
    ['a scalar', 'just text\n'],
    ['an empty document', ''],
  ])('rejects %s as the root', async (_label, text) => {
    const error = await issuesOf(loadDefinition(text));
    expect(error.issues).toEqual([
      expect.objectContaining({ code: 'ROOT_NOT_MAPPING', line: 1, path: '' }),
    ]);
  });

  it('rejects several documents in one file', async () => {
    const error = await issuesOf(loadDefinition('workflow_type: A\n---\nworkflow_type: B\n'));
    expect(error.issues[0]).toMatchObject({ code: 'YAML_SYNTAX', line: 2 });
  });
});

describe('names stored in sized columns', () => {
  it('refuses a parallel task name, a function path and a schedule name longer than their columns', async () => {
    const long = (n: number) => 'x'.repeat(n);
    const yaml = `
workflow_type: sized
steps:
  - name: fan
    type: PARALLEL
    tasks:
      - { name: ${long(201)}, function_path: steps.${long(500)} }
  - name: later
    type: CRON_SCHEDULE
    schedule_name: ${long(201)}
    cron_expression: "0 * * * *"
    target_workflow_type: other
    initial_data_template: {}
`;
    const error = await issuesOf(loadDefinition(yaml));
    expect(error.issues.map((issue) => [issue.path, issue.line, issue.code])).toEqual(
      expect.arrayContaining([
        ['steps[0].tasks[0].name', 7, 'INVALID_LENGTH'],
        ['steps[0].tasks[0].function_path', 7, 'INVALID_LENGTH'],
        ['steps[1].schedule_name', 10, 'INVALID_LENGTH'],
      ]),
    );
  });
});
