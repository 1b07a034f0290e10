/**
 * One-shot CLI processes honour timeouts on their own: they have no maintenance loop, and
 * timeouts used to be fired only there. `saffron run`: a 1 s PARALLEL `timeout_seconds`
 * ends the step while its slow task (2.5 s) still runs — it used to finish, and the step
 * COMPLETED — with the inline and the threads executors. `saffron resume` after a human
 * step's deadline passed: the deadline wins (the input used to be taken).
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
export const ask = (state, context) => {
  if (!context.input?.approved)
    throw Object.assign(new Error('wait'), { name: 'WorkflowPauseDirective', result: {} });
  return { approved: true };
};
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

writeFileSync(
  join(dir, 'approval.yaml'),
  `workflow_type: approval
automate_next: true
steps:
  - { name: approve, type: HUMAN_IN_LOOP, function: tasks.ask, timeout_seconds: 1 }
`,
);

describe('saffron resume: a human step whose deadline passed', () => {
  it('fails the workflow with HUMAN_INPUT_TIMEOUT instead of taking the late input', async () => {
    const db = join(dir, 'approval.db');
    const run = await runCli(['run', 'approval.yaml', '--steps', dir, '--db', db, '--json'], {
      cwd: dir,
    });
    const { id, status } = workflowOf(run);
    expect(status).toBe('WAITING_HUMAN_INPUT');
    // the deadline is wall-clock time: let it pass
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const late = await runCli(
      ['resume', id, '--input', '{"approved": true}', '--steps', dir, '--db', db],
      { cwd: dir },
    );
    expect(late.code).toBe(1);
    const shown = workflowOf(await runCli(['show', id, '--db', db, '--json'], { cwd: dir }));
    expect(shown.status).toBe('FAILED');
    expect(shown.error?.code).toBe('HUMAN_INPUT_TIMEOUT');
    expect(shown.state).not.toHaveProperty('approved');
  });
});

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
