/**
 * `dependencies`: steps that depend only on steps before them run at the same time (a wave);
 * their results are committed one by one in declaration order, and the first failure ends
 * the wave as if the steps had run in sequence. Concurrency is proven with a barrier, not a
 * clock: a step that waits alone at the barrier gives up and reports it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const events = async (rt: Runtime, id: string) =>
  (await rt.audit(id)).map((e) => (e.stepName ? `${e.eventType}:${e.stepName}` : e.eventType));

const FANOUT = `
workflow_type: fanout
automate_next: true
steps:
  - { name: load, type: STANDARD, function: steps.mark }
  - { name: fraud, type: STANDARD, function: steps.rendezvous, dependencies: [load] }
  - { name: limits, type: STANDARD, function: steps.rendezvous, dependencies: [load] }
  - { name: decide, type: STANDARD, function: steps.mark, dependencies: [fraud, limits] }
`;

for (const dialect of DIALECTS) {
  describe(`dependencies on ${dialect.name}`, () => {
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

    it('runs steps that depend on the same step at the same time, committing them in order', async () => {
      const wf = await rt.start(await definition(FANOUT));
      expect(wf.status).toBe('COMPLETED');
      expect(wf.state).toMatchObject({
        met_fraud: true,
        met_limits: true,
        key_fraud: `${wf.id}:fraud:1`,
        key_limits: `${wf.id}:limits:1`,
        visited: ['load', 'decide'],
      });
      expect(await events(rt, wf.id)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED:load',
        'STEP_EXECUTED:fraud',
        'STEP_EXECUTED:limits',
        'STEP_EXECUTED:decide',
        'WORKFLOW_COMPLETED',
      ]);
    });

    it('runs steps without dependencies one after another (control)', async () => {
      const wf = await rt.start(
        await definition(FANOUT.replace(/, dependencies: \[[a-z, ]+\]/g, '')),
        { wait_ms: 200 },
      );
      // fraud waited alone and gave up; limits then found fraud's arrival and passed
      expect(wf.state).toMatchObject({ met_fraud: false, met_limits: true });
    });

    it('does not start a step whose dependency is inside the wave', async () => {
      // limits depends on fraud: it may not run alongside it
      const chained = FANOUT.replace(
        'function: steps.rendezvous, dependencies: [load] }\n  - { name: decide',
        'function: steps.rendezvous, dependencies: [fraud] }\n  - { name: decide',
      );
      const wf = await rt.start(await definition(chained.replace('fanout', 'chained')), {
        wait_ms: 200,
      });
      expect(wf.state).toMatchObject({ met_fraud: false, met_limits: true });
    });

    it('ends the wave at the first failure: later results are dropped, the workflow fails there', async () => {
      const failing = FANOUT.replace('fanout', 'fanout_fail').replace(
        '{ name: fraud, type: STANDARD, function: steps.rendezvous',
        '{ name: fraud, type: STANDARD, function: steps.always_fail',
      );
      const wf = await rt.start(await definition(failing), { party_size: 1 });
      expect(wf.status).toBe('FAILED');
      expect(wf.currentStep).toBe('fraud');
      expect(wf.state).not.toHaveProperty('met_limits');
      expect(await events(rt, wf.id)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED:load',
        'STEP_FAILED:fraud',
        'WORKFLOW_FAILED',
      ]);
    });

    it('waits at a step without automate_next instead of running past it', async () => {
      const manual = FANOUT.replace('fanout', 'fanout_manual').replace(
        '{ name: fraud, type: STANDARD, function: steps.rendezvous, dependencies: [load] }',
        '{ name: fraud, type: STANDARD, function: steps.rendezvous, dependencies: [load], automate_next: false }',
      );
      const wf = await rt.start(await definition(manual), { wait_ms: 200 });
      expect(wf).toMatchObject({ status: 'ACTIVE', currentStep: 'limits' });
      expect(wf.state).toMatchObject({ met_fraud: false });
      expect(wf.state).not.toHaveProperty('met_limits');
    });
  });
}
