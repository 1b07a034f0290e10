/**
 * HUMAN_IN_LOOP waits by default: a function that returns on the step's first run parks the
 * workflow for a person just as a pause would, and going on without one is said explicitly
 * with the proceed directive (by name, or with the typed `proceed()` helper).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

for (const dialect of DIALECTS) {
  describe(`HUMAN_IN_LOOP on ${dialect.name}`, () => {
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

    it('waits for input when its function returns instead of pausing', async () => {
      const def = await definition(`
workflow_type: refund_review
automate_next: true
steps:
  - { name: review, type: HUMAN_IN_LOOP, function: steps.review_returns }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      let wf = await rt.start(def, { amount: 25000 });
      expect(wf).toMatchObject({
        status: 'WAITING_HUMAN_INPUT',
        currentStep: 'review',
        state: { amount: 25000, review_runs: 1, reviewed_by: null },
      });
      const paused = (await rt.audit(wf.id)).find((e) => e.eventType === 'WORKFLOW_PAUSED');
      expect(paused?.eventData).toEqual({ reason: 'human_input', by_default: true });

      wf = await rt.resume(wf.id, { by: 'kim' });
      expect(wf).toMatchObject({
        status: 'COMPLETED',
        state: { review_runs: 2, reviewed_by: 'kim', visited: ['finish'] },
      });
    });

    it('goes on without a person only when the function says so with the proceed directive', async () => {
      for (const fn of ['steps.review_small_alone', 'typed.review']) {
        const def = await definition(`
workflow_type: refund_${fn.replace('.', '_')}
automate_next: true
steps:
  - { name: review, type: HUMAN_IN_LOOP, function: ${fn} }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
        const small = await rt.start(def, { amount: 40 });
        expect(small, fn).toMatchObject({
          status: 'COMPLETED',
          state: { review: 'auto', visited: ['finish'] },
        });
        expect((await rt.audit(small.id)).map((e) => e.eventType)).not.toContain('WORKFLOW_PAUSED');

        let large = await rt.start(def, { amount: 25000 });
        expect(large, fn).toMatchObject({ status: 'WAITING_HUMAN_INPUT', state: { asked: true } });
        large = await rt.resume(large.id, { decision: 'approve' });
        expect(large, fn).toMatchObject({ status: 'COMPLETED', state: { review: 'approve' } });
      }
    });

    it('a proceed directive on a STANDARD step is a plain return, and a DECISION still routes', async () => {
      const def = await definition(`
workflow_type: proceed_elsewhere
automate_next: true
steps:
  - { name: first, type: STANDARD, function: typed.review }
  - name: route
    type: DECISION
    function: typed.review
    routes:
      - { condition: "state.review == 'auto'", target: finish }
  - { name: skipped, type: STANDARD, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      const wf = await rt.start(def, { amount: 1 });
      expect(wf).toMatchObject({ status: 'COMPLETED', state: { visited: ['finish'] } });
    });
  });
}
