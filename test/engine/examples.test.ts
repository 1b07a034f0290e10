/**
 * The examples run as documented: the payment authorization offline (floor limit) and online
 * against a local stand-in for the acquirer's host (approval, decline, and a capture failure
 * that voids the authorization), and the loan application through its sub-workflow and a
 * human review.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../actors/index.js';
import { mapSecrets } from '../../runtime/index.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const payments = fileURLToPath(new URL('../../examples/payments/', import.meta.url));
const loans = fileURLToPath(new URL('../../examples/loans/', import.meta.url));
const card = { token: 'tok_visa_01', last4: '4242', expiry: '12/29' };

let acquirer: Server;
let acquirerUrl = '';
const authorizations: { auth: string | undefined; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  acquirer = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      authorizations.push({ auth: req.headers.authorization, body });
      const approved = Number(body.amount_minor) <= 100_000;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          approved
            ? { approved, authorization_id: randomUUID() }
            : { approved, reason: 'LIMIT_EXCEEDED' },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => acquirer.listen(0, '127.0.0.1', resolve));
  acquirerUrl = `http://127.0.0.1:${(acquirer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => acquirer.close(resolve));
});

const dialects = DIALECTS.filter((d) => d.name !== 'pglite');

for (const dialect of dialects) {
  describe(`examples on ${dialect.name}`, () => {
    let handle: TestStore;
    let pay: Runtime;
    let loan: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      pay = createRuntime({
        store: handle.store,
        stepsRoot: payments,
        secrets: mapSecrets({ ACQUIRER_TOKEN: { value: 'acq-token-123', hosts: ['127.0.0.1'] } }),
        outbound: { allowedPrivateNetworks: ['loopback'] },
      });
      await pay.registry.registerDirectory(payments);
      loan = createRuntime({ store: handle.store, stepsRoot: loans });
      await loan.registry.registerDirectory(loans);
    });
    afterEach(async () => {
      await pay.close();
      await loan.close();
      await handle.close();
    });

    it('approves offline under the floor limit and declines over it', async () => {
      const small = await pay.start('payment_authorization', { amount_minor: 1250, card });
      expect(small).toMatchObject({
        status: 'COMPLETED',
        state: {
          decision: { status: 'APPROVED', mode: 'OFFLINE' },
          receipt: { text: 'APPROVED 12.50 EUR card ****4242' },
        },
      });
      const large = await pay.start('payment_authorization', { amount_minor: 9900, card });
      expect(large).toMatchObject({
        status: 'COMPLETED',
        state: { decision: { status: 'DECLINED', reason: 'OVER_FLOOR_LIMIT' } },
      });
      const bad = await pay.start('payment_authorization', { amount_minor: -5, card });
      expect(bad.status).toBe('FAILED');
    });

    it('authorizes online with the acquirer, sending the bearer secret, and declines above its limit', async () => {
      authorizations.length = 0;
      const ok = await pay.start('payment_authorization', {
        amount_minor: 25_000,
        card,
        online: true,
        acquirer_url: acquirerUrl,
        terminal_id: 'pos-17',
      });
      expect(ok).toMatchObject({
        status: 'COMPLETED',
        state: { decision: { status: 'APPROVED', mode: 'ONLINE' } },
      });
      expect(authorizations[0]).toEqual({
        auth: 'Bearer acq-token-123',
        body: {
          amount_minor: 25_000,
          currency: 'EUR',
          card_token: 'tok_visa_01',
          terminal_id: 'pos-17',
        },
      });
      expect(JSON.stringify(ok)).not.toContain('acq-token-123');
      const declined = await pay.start('payment_authorization', {
        amount_minor: 250_000,
        card,
        online: true,
        acquirer_url: acquirerUrl,
        terminal_id: 'pos-17',
      });
      expect(declined).toMatchObject({
        status: 'COMPLETED',
        state: { decision: { status: 'DECLINED', mode: 'ONLINE', reason: 'LIMIT_EXCEEDED' } },
      });
    });

    it('voids the authorization when capture fails', async () => {
      const wf = await pay.start('payment_authorization', {
        amount_minor: 30_000,
        card,
        online: true,
        acquirer_url: acquirerUrl,
        terminal_id: 'pos-17',
        simulate_capture_failure: true,
      });
      expect(wf.status).toBe('FAILED_ROLLED_BACK');
      expect(wf.state).toMatchObject({
        authorization: { voided: true },
        decision: { status: 'VOIDED' },
      });
      const trail = (await pay.audit(wf.id)).map((e) => e.eventType);
      expect(trail).toContain('COMPENSATION_COMPLETED');
    });

    it('decides a strong loan application automatically through the credit-check sub-workflow', async () => {
      const started = await loan.start('loan_application', {
        amount: 20_000,
        applicant: {
          id: 'a-1',
          income: 60_000,
          debts: [{ monthly_payment: 400 }, { monthly_payment: 300 }],
        },
      });
      const done = await loan.runUntilSettled(started.id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: {
          outcome: 'APPROVED',
          notified: true,
          sub_workflow_results: { credit_check: { score: 733 } },
        },
      });
    });

    it('sends a borderline loan application to a human and finishes after the review', async () => {
      const started = await loan.start('loan_application', {
        amount: 30_000,
        applicant: {
          id: 'a-2',
          income: 40_000,
          debts: [{ monthly_payment: 300 }, { monthly_payment: 200 }],
        },
      });
      const waiting = await loan.runUntilSettled(started.id);
      expect(waiting).toMatchObject({ status: 'WAITING_HUMAN_INPUT', currentStep: 'human_review' });
      const score = (waiting.state.sub_workflow_results as { credit_check: { score: number } })
        .credit_check.score;
      expect(score).toBeGreaterThanOrEqual(500);
      expect(score).toBeLessThan(700);
      const done = await loan.resume(started.id, {
        decision: 'reject',
        reviewer: 'kim',
        note: 'income too low',
      });
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: { outcome: 'REJECTED', review: { decision: 'reject', reviewer: 'kim' } },
      });
    });
  });
}
