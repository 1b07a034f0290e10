/**
 * Conditions that used to be quietly false: ordering values of different types fails the
 * DECISION with EXPRESSION_TYPE_MISMATCH, and a route chosen while a path was missing names
 * that path in its JUMPED audit row.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const REFUND = `
workflow_type: refund_gate
automate_next: true
steps:
  - name: gate
    type: DECISION
    function: steps.noop
    routes:
      - { condition: "CONDITION", target: review }
      - { default: pay }
  - { name: review, type: STANDARD, function: steps.mark }
  - { name: pay, type: STANDARD, function: steps.mark }
`;

for (const dialect of DIALECTS) {
  describe(`DECISION conditions on ${dialect.name}`, () => {
    let handle: TestStore;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      rt = engineFor(handle);
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });

    const gate = (condition: string) => definition(REFUND.replace('CONDITION', condition));

    it('fails the step when a condition orders a number against a string', async () => {
      const wf = await rt.start(await gate("state.amount_minor > '10000'"), {
        amount_minor: 25000,
      });
      expect(wf.status).toBe('FAILED');
      const failed = (await rt.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED');
      expect(failed?.eventData).toMatchObject({
        error: {
          code: 'EXPRESSION_TYPE_MISMATCH',
          step: 'gate',
          message:
            "route condition 'state.amount_minor > '10000'' failed: cannot compare number with string using '>' in state.amount_minor > '10000'",
        },
      });
    });

    it('records the missing path in the audit row of the route it decided', async () => {
      const wf = await rt.start(await gate('state.amount.minor > 10000'), {
        amount_minor: 25000,
      });
      expect(wf).toMatchObject({ status: 'COMPLETED', state: { visited: ['pay'] } });
      const jumped = (await rt.audit(wf.id)).find((e) => e.eventType === 'JUMPED');
      expect(jumped?.eventData).toEqual({
        from: 'gate',
        to: 'pay',
        missing_paths: ['state.amount.minor'],
      });

      const present = await rt.start(await gate('state.amount.minor > 10000'), {
        amount: { minor: 25000 },
      });
      // the review step runs, then falls through to pay
      expect(present).toMatchObject({ status: 'COMPLETED', state: { visited: ['review', 'pay'] } });
      const clean = (await rt.audit(present.id)).find((e) => e.eventType === 'JUMPED');
      expect(clean?.eventData).toEqual({ from: 'gate', to: 'review' });
    });
  });
}
