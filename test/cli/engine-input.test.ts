/**
 * Bad input to the engine commands fails with a clear message and a non-zero exit (2 for
 * usage errors), before any database is created: malformed or non-object JSON, conflicting
 * or missing data files, invalid definitions (reported like `saffron validate`), unknown
 * workflow ids, and bad option values.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { payment, paymentsDir, paymentYaml, workflowOf } from './engineHelpers.js';

const fixtures = fileURLToPath(new URL('../fixtures/definitions/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'saffron-engine-input-'));
const db = join(dir, 'input.db');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('saffron run: bad --data', () => {
  it('says where malformed JSON is, exits 2 and creates no database', async () => {
    const run = await runCli(['run', paymentYaml, '--data', '{"amount_minor": 1250,}'], {
      cwd: dir,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^saffron: --data is not valid JSON at line 1, column 23: /);
    expect(existsSync(join(dir, '.saffron'))).toBe(false);
  });

  it('counts lines in a multi-line data file', async () => {
    writeFileSync(join(dir, 'bad.json'), '{\n  "amount_minor": 1250\n  "card": {}\n}\n');
    const run = await runCli(['run', paymentYaml, '--data-file', 'bad.json'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^saffron: data file bad\.json is not valid JSON at line 3, column 3: /,
    );
  });

  it('says so when JSON ends too early', async () => {
    const run = await runCli(['run', paymentYaml, '--data', '{"a": '], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--data is not valid JSON at line 1, column 7');
  });

  it('rejects data that is not a JSON object', async () => {
    for (const [data, kind] of [
      ['[1, 2]', 'an array'],
      ['42', 'a number'],
      ['null', 'null'],
      ['"x"', 'a string'],
    ] as const) {
      const run = await runCli(['run', paymentYaml, '--data', data], { cwd: dir });
      expect(run.code, data).toBe(2);
      expect(run.stderr).toBe(`saffron: --data must be a JSON object, got ${kind}\n`);
    }
  });

  it('rejects --data with --data-file, and a missing data file', async () => {
    writeFileSync(join(dir, 'ok.json'), payment(100));
    const both = await runCli(['run', paymentYaml, '--data', '{}', '--data-file', 'ok.json'], {
      cwd: dir,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('saffron: give either --data or --data-file, not both\n');
    const missing = await runCli(['run', paymentYaml, '--data-file', 'nope.json'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('saffron: cannot read data file nope.json: no such file\n');
  });

  it('rejects a malformed --input to resume and retry', async () => {
    for (const command of ['resume', 'retry']) {
      const run = await runCli([command, 'some-id', '--input', '{decision: approve}', '--db', db], {
        cwd: dir,
      });
      expect(run.code, command).toBe(2);
      expect(run.stderr).toMatch(/^saffron: --input is not valid JSON at line 1, column 2: /);
    }
  });
});

describe('saffron run: bad definitions', () => {
  it('lists every problem of an invalid definition like validate does, and exits 1', async () => {
    const run = await runCli(['run', 'broken.yaml', '--db', db], { cwd: fixtures });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^saffron: invalid broken\.yaml: 15 error\(s\)/);
    expect(run.stderr).toContain(
      "  broken.yaml:6:5 steps[0].fucntion: unknown key 'fucntion' (did you mean 'function'?)",
    );
    expect(run.stderr).toContain(
      "  broken.yaml:21:18 steps[3].routes[1].default: unknown step 'aprove' (did you mean 'approve'?)",
    );
    const lines = run.stderr.split('\n').filter((l) => /^ {2}broken\.yaml:\d+:\d+ /.test(l));
    expect(lines).toHaveLength(15);
  });

  it('fails clearly on a missing definition file', async () => {
    const run = await runCli(['run', 'nope.yaml', '--db', db], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot read workflow definition');
  });

  it('skips a broken definition beside the one being run with a warning', async () => {
    const folder = join(dir, 'flows');
    mkdirSync(folder);
    cpSync(paymentYaml, join(folder, 'payment_authorization.yaml'));
    cpSync(join(fixtures, 'broken.yaml'), join(folder, 'broken.yaml'));
    const run = await runCli(
      [
        'run',
        'flows/payment_authorization.yaml',
        '--steps',
        paymentsDir,
        '--data',
        payment(100),
        '--db',
        db,
        '--json',
      ],
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(workflowOf(run).status).toBe('COMPLETED');
    expect(run.stderr).toMatch(
      /saffron: warning: skipped invalid flows\/broken\.yaml: \d+ error\(s\) \(run .saffron validate. for details\)$/m,
    );

    // a folder named with --workflows must be valid
    const strict = await runCli(
      ['run', paymentYaml, '--workflows', 'flows', '--data', payment(100), '--db', db],
      { cwd: dir },
    );
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/^saffron: invalid flows\/broken\.yaml: \d+ error\(s\)/);
    const missing = await runCli(['list', '--workflows', 'no-such-dir', '--db', db], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'saffron: cannot read workflows folder no-such-dir: no such folder\n',
    );
  });

  it('reports a step module that cannot be found as a definition problem', async () => {
    const run = await runCli(['run', paymentYaml, '--steps', dir, '--db', db], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^saffron: invalid .*payment_authorization\.yaml: \d+ error\(s\)/);
    expect(run.stderr).toContain('payments.validate_card');
    const fromEnv = await runCli(['run', paymentYaml, '--db', db], {
      cwd: dir,
      env: { SAFFRON_STEPS_DIR: dir },
    });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain(`module for 'payments.validate_card' not found under ${dir}`);
  });
});

describe('engine commands: unknown ids and bad options', () => {
  it('reports WORKFLOW_NOT_FOUND for every command on an unknown id', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const args of [
      ['show', id],
      ['resume', id, '--input', '{}'],
      ['retry', id],
      ['cancel', id],
      ['pause', id],
    ]) {
      const run = await runCli([...args, '--db', db], { cwd: dir });
      expect(run.code, args[0]).toBe(1);
      expect(run.stderr).toBe(
        `saffron: error: WORKFLOW_NOT_FOUND: workflow ${id} does not exist in database sqlite:${db}\n`,
      );
    }
    const json = await runCli(['show', id, '--db', db, '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      error: {
        code: 'WORKFLOW_NOT_FOUND',
        message: `workflow ${id} does not exist in database sqlite:${db}`,
      },
    });
  });

  it('rejects an unknown status, a bad limit, an unknown flag and a missing argument with exit 2', async () => {
    const status = await runCli(['list', '--status', 'DONE', '--db', db], { cwd: dir });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain("argument 'DONE' is invalid. expected one of ACTIVE,");
    for (const limit of ['0', '-1', 'ten', '1001', '2.5']) {
      const run = await runCli(['list', '--limit', limit, '--db', db], { cwd: dir });
      expect(run.code, limit).toBe(2);
    }
    const flag = await runCli(['run', paymentYaml, '--bogus'], { cwd: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("unknown option '--bogus'");
    const noId = await runCli(['show'], { cwd: dir });
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain("missing required argument 'id'");
  });

  it('lists nothing on an empty database', async () => {
    const empty = join(dir, 'empty.db');
    const run = await runCli(['list', '--db', empty], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('no workflows\n');
    const json = await runCli(['list', '--db', empty, '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toEqual({ workflows: [] });
  });
});
