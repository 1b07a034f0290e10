/**
 * `saffron run` honours a PARALLEL step's `timeout_seconds` on its own: a one-shot process
 * has no maintenance loop, and the timeout used to be fired only there — a task that ran
 * past it finished and the step COMPLETED. Here a 1 s timeout ends the step while its slow
 * task (2.5 s) still runs, with the inline and the threads executors.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { workflowOf } from './engineHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-parallel-timeout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'tasks.js'),
  `export const fast = () => ({ fast_done: true });
export const slow = () =>
  new Promise((resolve) => setTimeout(() => resolve({ slow_done: true }), 2500));
`,
);
writeFileSync(
  join(dir, 'fanout.yaml'),
  `workflow_type: fanout
automate_next: true
steps:
  - name: fan
    type: PARALLEL
    timeout_seconds: 1
    tasks:
      - { name: quick, function_path: tasks.fast }
      - { name: sluggish, function_path: tasks.slow }
`,
);

describe('saffron run: PARALLEL timeout_seconds', () => {
  it.each(['inline', 'threads'])(
    'fails the step when a task outlives it (%s)',
    async (executor) => {
      const db = join(dir, `${executor}.db`);
      const run = await runCli(
        ['run', 'fanout.yaml', '--steps', dir, '--executor', executor, '--db', db, '--json'],
        { cwd: dir },
      );
      expect(run.code, run.stderr).toBe(1);
      const wf = workflowOf(run);
      expect(wf.status).toBe('FAILED');
      expect(wf.error?.step).toBe('fan');
      expect(wf.error?.message).toContain('sluggish: timed out after 1 s');
      expect(wf.state).not.toHaveProperty('slow_done');
    },
  );
});
