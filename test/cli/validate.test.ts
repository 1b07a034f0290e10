/** `saffron validate`: a one-line summary for a good definition, every problem for a bad one. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const fixtures = fileURLToPath(new URL('../fixtures/definitions/', import.meta.url));

describe('saffron validate', () => {
  it('prints a one-line summary and exits 0 for a valid definition', async () => {
    const run = await runCli(['validate', 'payment_flow.yaml'], { cwd: fixtures });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toMatch(
      /^ok payment_flow\.yaml: CardPayment v1\.0, \d+ steps \(.*WASM×1\), 4 warning\(s\)$/,
    );
  });

  it('lists every problem with its line and exits 1', async () => {
    const run = await runCli(['validate', 'broken.yaml'], { cwd: fixtures });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^invalid broken\.yaml: 15 error\(s\)/);
    expect(run.stdout).toContain(
      "broken.yaml:6:5 steps[0].fucntion: unknown key 'fucntion' (did you mean 'function'?)",
    );
    expect(run.stdout).toContain(
      "broken.yaml:21:18 steps[3].routes[1].default: unknown step 'aprove' (did you mean 'approve'?)",
    );
    expect(run.stdout).toContain('broken.yaml:29:20 steps[5].dependencies[0]: dependency cycle');
    const lines = run.stdout.split('\n').filter((l) => /broken\.yaml:\d+:\d+ /.test(l));
    expect(lines).toHaveLength(15);
  });

  it('reports JSON with --json', async () => {
    const run = await runCli(['validate', 'broken.yaml', 'payment_flow.yaml', '--json'], {
      cwd: fixtures,
    });
    expect(run.code).toBe(1);
    const body = JSON.parse(run.stdout) as {
      ok: boolean;
      files: { file: string; ok: boolean; errors: { line: number }[] }[];
    };
    expect(body.ok).toBe(false);
    expect(body.files.map((f) => [f.file, f.ok])).toEqual([
      ['broken.yaml', false],
      ['payment_flow.yaml', true],
    ]);
    expect(body.files[0]!.errors.every((e) => e.line > 0)).toBe(true);
  });

  it('fails clearly on a missing file and on malformed YAML', async () => {
    const missing = await runCli(['validate', 'nope.yaml'], { cwd: fixtures });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read workflow definition');
    const malformed = await runCli(['validate', 'malformed-yaml.txt'], { cwd: fixtures });
    expect(malformed.code).toBe(1);
    expect(malformed.stdout).toMatch(/malformed-yaml\.txt:\d+:\d+ /);
  });

  it('refuses a secret in a template that becomes stored state, at its line, as run does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saffron-validate-'));
    writeFileSync(
      join(dir, 'spawn.yaml'),
      [
        'workflow_type: spawner',
        'steps:',
        '  - name: spawn',
        '    type: FIRE_AND_FORGET',
        '    target_workflow_type: spawner',
        '    initial_data_template:',
        '      amount: "{{ state.amount }}"',
        '      token: "{{ secrets.API_TOKEN }}"',
        '',
      ].join('\n'),
    );
    const run = await runCli(['validate', 'spawn.yaml'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^invalid spawn\.yaml: 1 error\(s\)/);
    expect(run.stdout).toMatch(
      /spawn\.yaml:8:\d+ steps\[0\]\.initial_data_template\.token: '\{\{ secrets\.API_TOKEN \}\}': secrets cannot be used here .*secrets are never stored/,
    );
  });
});
