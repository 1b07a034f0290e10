/**
 * `saffron run`, `show` and `validate` name a workflow's version once: `v2` whether the
 * definition says `2` or `v2` (it printed `vv2`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ENGINE_STEPS } from '../support/engine.js';
import { workflowOf } from './engineHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-version-'));
const db = join(dir, 'version.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the version of a workflow in CLI output', () => {
  it.each(['v2', '2'])('is v2 for workflow_version %s', async (version) => {
    const yaml = join(dir, `versioned_${version}.yaml`);
    writeFileSync(
      yaml,
      `workflow_type: versioned\nworkflow_version: "${version}"\nsteps:\n  - { name: only, type: STANDARD, function: steps.mark }\n`,
    );
    const validated = await runCli(['validate', yaml, '--steps', ENGINE_STEPS], { cwd: dir });
    expect(validated.stdout).toContain('versioned v2, 1 steps');
    const run = await runCli(['run', yaml, '--steps', ENGINE_STEPS, '--db', db, '--json'], {
      cwd: dir,
    });
    const { id } = workflowOf(run);
    const shown = await runCli(['show', id, '--db', db], { cwd: dir });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^type +versioned v2$/m);
  });
});
