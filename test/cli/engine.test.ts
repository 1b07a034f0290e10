/**
 * `saffron run | resume | list | show | retry | cancel | pause` end to end on a SQLite file:
 * the payment example offline (approved under the floor limit, declined over it) and online
 * against a local acquirer with a secret from the environment, the loan example through its
 * credit-check sub-workflow to a human review and on to a decision, operator controls, and
 * the exit codes of workflows that end FAILED, FAILED_ROLLED_BACK or CANCELLED.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  loansDir,
  loanYaml,
  payment,
  paymentsDir,
  paymentYaml,
  reviewLoan,
  workflowOf,
} from './engineHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-engine-'));
const db = join(dir, 'engine.db');

/** `saffron …args --db <the test's SQLite file>` in the temp folder. */
/** The fake acquirer is on loopback: allowed, and the token bound to it, as its operator would. */
const ACQUIRER_ON_LOOPBACK = {
  SAFFRON_HTTP_ALLOW_PRIVATE: 'loopback',
  SAFFRON_SECRET_ACQUIRER_TOKEN_HOSTS: '127.0.0.1',
};

function saffron(args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCli([...args, '--db', db], { cwd: dir, env });
}

/** Start the loan example and return the workflow waiting for review. */
async function waitingLoan() {
  const run = await saffron(['run', loanYaml, '--data', reviewLoan, '--json']);
  expect(run.code, run.stderr).toBe(0);
  const wf = workflowOf(run);
  expect(wf.status).toBe('WAITING_HUMAN_INPUT');
  return wf;
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('saffron run: the payment example offline', () => {
  it('approves a payment under the floor limit and prints the workflow as JSON', async () => {
    const run = await saffron(['run', paymentYaml, '--data', payment(1250), '--json']);
    expect(run.code, run.stderr).toBe(0);
    const wf = workflowOf(run);
    expect(Object.keys(wf).sort()).toEqual(
      [
        'id',
        'workflow_type',
        'workflow_version',
        'status',
        'current_step',
        'current_step_index',
        'state',
        'created_at',
        'updated_at',
      ].sort(),
    );
    expect(wf).toMatchObject({
      workflow_type: 'payment_authorization',
      workflow_version: '1',
      status: 'COMPLETED',
    });
    expect(wf.state).toMatchObject({
      path: 'offline',
      decision: { status: 'APPROVED', mode: 'OFFLINE', reason: 'UNDER_FLOOR_LIMIT' },
      receipt: { text: 'APPROVED 12.50 EUR card ****4242' },
    });
  });

  it('declines a payment over the floor limit', async () => {
    const run = await saffron(['run', paymentYaml, '--data', payment(9000), '--json']);
    expect(run.code, run.stderr).toBe(0);
    const wf = workflowOf(run);
    expect(wf.status).toBe('COMPLETED');
    expect(wf.state).toMatchObject({
      decision: { status: 'DECLINED', reason: 'OVER_FLOOR_LIMIT' },
      receipt: { text: 'DECLINED 90.00 EUR card ****4242' },
    });
  });

  it('prints a readable block by default and reads --data-file', async () => {
    const file = join(dir, 'payment.json');
    writeFileSync(file, payment(700));
    const run = await saffron(['run', paymentYaml, '--data-file', 'payment.json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^id {12}[0-9a-f-]{36}$/m);
    expect(run.stdout).toMatch(/^type {10}payment_authorization v1$/m);
    expect(run.stdout).toMatch(/^status {8}COMPLETED$/m);
    expect(run.stdout).toMatch(/^current step {2}-$/m);
    expect(run.stdout).toMatch(/^state:\n {2}\{\n {4}"floor_limit_minor": 5000,$/m);
    expect(run.stdout).toContain('"text": "APPROVED 7.00 EUR card ****4242"');
  });

  it('exits 1 with the step and message when the workflow ends FAILED, and retries with corrected input', async () => {
    const run = await saffron(['run', paymentYaml, '--data', payment(-5), '--json']);
    expect(run.code).toBe(1);
    const wf = workflowOf(run);
    expect(wf.status).toBe('FAILED');
    expect(wf.error).toMatchObject({ step: 'validate_card' });
    expect(run.stderr).toMatch(
      new RegExp(
        `^saffron: workflow ${wf.id} ended FAILED at validate_card: .*amount_minor must be a positive integer\\n$`,
      ),
    );
    const retried = await saffron([
      'retry',
      wf.id,
      '--input',
      '{"amount_minor": 300}',
      '--steps',
      paymentsDir,
      '--json',
    ]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(workflowOf(retried)).toMatchObject({
      id: wf.id,
      status: 'COMPLETED',
      state: { decision: { status: 'APPROVED' } },
    });
  });
});

describe('saffron run: the payment example online', () => {
  let server: Server;
  let origin: string;
  const seen: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ approved: true, authorization_id: 'auth-1' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('authorizes with the acquirer using the secret from SAFFRON_SECRET_ACQUIRER_TOKEN', async () => {
    const data = payment(12000, { online: true, acquirer_url: origin, terminal_id: 'T1' });
    const run = await saffron(['run', paymentYaml, '--data', data, '--json'], {
      SAFFRON_SECRET_ACQUIRER_TOKEN: 'tok-from-env',
      ...ACQUIRER_ON_LOOPBACK,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(workflowOf(run).state).toMatchObject({
      decision: { status: 'APPROVED', mode: 'ONLINE', authorization_id: 'auth-1' },
    });
    expect(seen.at(-1)?.authorization).toBe('Bearer tok-from-env');
  });

  it('exits 1 when a capture failure rolls the authorization back (FAILED_ROLLED_BACK)', async () => {
    const data = payment(12000, {
      online: true,
      acquirer_url: origin,
      terminal_id: 'T1',
      simulate_capture_failure: true,
    });
    const run = await saffron(['run', paymentYaml, '--data', data, '--json'], {
      SAFFRON_SECRET_ACQUIRER_TOKEN: 'tok-from-env',
      ...ACQUIRER_ON_LOOPBACK,
    });
    expect(run.code).toBe(1);
    const wf = workflowOf(run);
    expect(wf.status).toBe('FAILED_ROLLED_BACK');
    expect(wf.state).toMatchObject({ authorization: { voided: true } });
    expect(run.stderr).toContain(
      `saffron: workflow ${wf.id} ended FAILED_ROLLED_BACK at capture: `,
    );
    expect(run.stderr).toContain('capture rejected by the acquirer');
  });
});

describe('saffron run | resume | show | list: the loan example', () => {
  it('runs the credit check sub-workflow, waits for review, and completes on resume', async () => {
    const wf = await waitingLoan();
    expect(wf.current_step).toBe('human_review');
    expect(wf.state).toMatchObject({
      credit_score: 685,
      review_requested: { score: 685, amount: 30000 },
      sub_workflow_results: { credit_check: { total_debt: 500, score: 685 } },
    });

    const waiting = await saffron(['list', '--status', 'WAITING_HUMAN_INPUT', '--json']);
    expect(waiting.code, waiting.stderr).toBe(0);
    const listed = (JSON.parse(waiting.stdout) as { workflows: { id: string; status: string }[] })
      .workflows;
    expect(listed.map((w) => w.id)).toContain(wf.id);
    expect(listed.every((w) => w.status === 'WAITING_HUMAN_INPUT')).toBe(true);
    const children = await saffron(['list', '--type', 'credit_check', '--status', 'completed']);
    expect(children.code, children.stderr).toBe(0);
    expect(children.stdout).toMatch(/^ID +TYPE +STATUS +CURRENT STEP +UPDATED$/m);
    expect(children.stdout).toMatch(/^[0-9a-f-]{36} {2}credit_check {2}COMPLETED +- +\S+Z$/m);

    const resumed = await saffron([
      'resume',
      wf.id,
      '--input',
      '{"decision":"approve","reviewer":"kim"}',
      '--steps',
      loansDir,
      '--json',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(workflowOf(resumed)).toMatchObject({
      id: wf.id,
      status: 'COMPLETED',
      state: { outcome: 'APPROVED', review: { decision: 'approve', reviewer: 'kim' } },
    });

    const shown = await saffron(['show', wf.id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const events = workflowOf(shown).audit!.map((e) => `${e.event_type} ${e.step_name ?? '-'}`);
    expect(events).toEqual(
      expect.arrayContaining([
        'WORKFLOW_STARTED -',
        'WORKFLOW_PAUSED credit_check',
        'WORKFLOW_PAUSED human_review',
        'WORKFLOW_RESUMED human_review',
        'WORKFLOW_COMPLETED -',
      ]),
    );
    expect(events.at(-1)).toBe('WORKFLOW_COMPLETED -');

    const text = await saffron(['show', wf.id]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^status {8}COMPLETED$/m);
    expect(text.stdout).toMatch(/^audit trail \(\d+ event\(s\)\):$/m);
    expect(text.stdout).toMatch(
      /^ {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}WORKFLOW_PAUSED +human_review +\{"reason":"human_input"\}$/m,
    );
    expect(text.stdout).toMatch(/^ {2}\S+Z {2}WORKFLOW_RESUMED +human_review +\{/m);
  });

  it('refuses to resume a workflow that is not waiting and to retry a completed one', async () => {
    const run = await saffron(['run', paymentYaml, '--data', payment(100), '--json']);
    const id = workflowOf(run).id;
    const resume = await saffron(['resume', id, '--input', '{}']);
    expect(resume.code).toBe(1);
    expect(resume.stderr).toBe(
      `saffron: error: WORKFLOW_NOT_WAITING: workflow ${id} is COMPLETED, not WAITING_HUMAN_INPUT\n`,
    );
    const retry = await saffron(['retry', id, '--json']);
    expect(retry.code).toBe(1);
    expect(retry.stderr).toContain('saffron: error: WORKFLOW_NOT_RETRYABLE: ');
    expect(JSON.parse(retry.stdout)).toEqual({
      ok: false,
      error: {
        code: 'WORKFLOW_NOT_RETRYABLE',
        message: expect.stringContaining('COMPLETED') as unknown,
      },
    });
  });

  it('cancels a waiting workflow, then retries it from a named step', async () => {
    const wf = await waitingLoan();
    const cancelled = await saffron(['cancel', wf.id, '--reason', 'applicant withdrew', '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(workflowOf(cancelled).status).toBe('CANCELLED');
    const again = await saffron(['cancel', wf.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('WORKFLOW_TERMINAL');

    // from credit_check: a new credit-check child is spawned, so its type must be registered
    const retried = await saffron([
      'retry',
      wf.id,
      '--from-step',
      'credit_check',
      '--steps',
      loansDir,
      '--workflows',
      loansDir,
      '--json',
    ]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(workflowOf(retried)).toMatchObject({
      status: 'WAITING_HUMAN_INPUT',
      current_step: 'human_review',
    });
    const children = await saffron(['list', '--type', 'credit_check', '--json']);
    const childIds = (JSON.parse(children.stdout) as { workflows: unknown[] }).workflows;
    expect(childIds.length).toBeGreaterThanOrEqual(2);

    const audit = workflowOf(await saffron(['show', wf.id, '--json'])).audit!;
    expect(audit).toContainEqual(
      expect.objectContaining({
        event_type: 'WORKFLOW_CANCELLED',
        data: expect.objectContaining({ reason: 'applicant withdrew' }) as unknown,
      }),
    );
    expect(audit).toContainEqual(
      expect.objectContaining({ event_type: 'WORKFLOW_RETRIED', step_name: 'credit_check' }),
    );

    const unknownStep = await saffron(['retry', wf.id, '--from-step', 'nope']);
    expect(unknownStep.code).toBe(1);
  });

  it('refuses to resume a cancelled workflow; a retry from human_review waits again', async () => {
    const wf = await waitingLoan();
    expect((await saffron(['cancel', wf.id])).code).toBe(0);
    const resume = await saffron(['resume', wf.id, '--input', '{"decision":"approve"}']);
    expect(resume.code).toBe(1);
    expect(resume.stderr).toContain('WORKFLOW_NOT_WAITING');
    const retried = await saffron([
      'retry',
      wf.id,
      '--from-step',
      'human_review',
      '--steps',
      loansDir,
    ]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/^status {8}WAITING_HUMAN_INPUT$/m);
  });

  it('refuses to drive a workflow whose step functions do not load, leaving it waiting', async () => {
    const wf = await waitingLoan();
    const resume = await saffron(['resume', wf.id, '--input', '{"decision":"approve"}']);
    expect(resume.code).toBe(1);
    expect(resume.stderr).toContain(
      `saffron: step functions of workflow ${wf.id} (loan_application) do not load from ${dir}; pass --steps DIR or set SAFFRON_STEPS_DIR`,
    );
    expect(resume.stderr).toContain(
      "steps[3].function: module for 'loans.request_review' not found",
    );
    const shown = workflowOf(await saffron(['show', wf.id, '--json']));
    expect(shown.status).toBe('WAITING_HUMAN_INPUT');

    // SAFFRON_STEPS_DIR names the step root when --steps is not given
    const resumed = await saffron(
      ['resume', wf.id, '--input', '{"decision":"approve"}', '--json'],
      {
        SAFFRON_STEPS_DIR: loansDir,
      },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(workflowOf(resumed).state).toMatchObject({ outcome: 'APPROVED' });
  });

  it('pauses a waiting workflow; resume with input both unpauses it and gives the decision', async () => {
    const wf = await waitingLoan();
    const paused = await saffron(['pause', wf.id, '--json']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(workflowOf(paused).status).toBe('PAUSED');
    const resumed = await saffron([
      'resume',
      wf.id,
      '--input',
      '{"decision":"reject","reviewer":"lee"}',
      '--steps',
      loansDir,
      '--json',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(workflowOf(resumed)).toMatchObject({
      status: 'COMPLETED',
      state: { outcome: 'REJECTED' },
    });
    const pausedAgain = await saffron(['pause', wf.id]);
    expect(pausedAgain.code).toBe(1);
    expect(pausedAgain.stderr).toContain('WORKFLOW_TERMINAL');
  });
});
