/**
 * `saffron edge run` refuses what it cannot run with before starting anything: missing
 * required options, out-of-range numbers, a cloud URL that is not one, and a secret file
 * that is missing or empty — each a usage error (exit 2) that names the problem.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('saffron edge run (argument checks)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'saffron-edge-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const base = ['edge', 'run', '--device-id', 'pos-1', '--cloud-url', 'http://127.0.0.1:1'];

  it('requires the device id, cloud URL and secret file', async () => {
    const run = await runCli(['edge', 'run', '--device-id', 'pos-1'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("required option '--cloud-url <url>' not specified");
  });

  it('refuses bad numbers, URLs and secret files with exit 2', async () => {
    const empty = join(dir, 'empty.secret');
    writeFileSync(empty, '\n', { mode: 0o600 });
    const secret = join(dir, 'device.secret');
    writeFileSync(secret, 'abc\n', { mode: 0o600 });
    const cases: [string[], string][] = [
      [
        [...base, '--secret-file', secret, '--local-port', '70000'],
        '--local-port must be an integer from 0 to 65535',
      ],
      [
        [...base, '--secret-file', secret, '--saf-batch-size', '0'],
        '--saf-batch-size must be an integer from 1 to 500',
      ],
      [
        [
          'edge',
          'run',
          '--device-id',
          'pos-1',
          '--cloud-url',
          'not a url',
          '--secret-file',
          secret,
        ],
        '--cloud-url is not a URL',
      ],
      [[...base, '--secret-file', join(dir, 'missing.secret')], 'cannot read device secret file'],
      [[...base, '--secret-file', empty], 'is empty'],
      [
        [...base, '--secret-file', secret, '--executor', 'postgres'],
        "argument 'postgres' is invalid",
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(args, { cwd: dir });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });
});
