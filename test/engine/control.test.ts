/** Operator controls, versioning, idempotent start and bad input, on every dialect. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const TWO_STEPS = `
workflow_type: two_steps
steps:
  - { name: first, type: STANDARD, function: steps.mark }
  - { name: second, type: STANDARD, function: steps.mark }
`;

for (const dialect of DIALECTS) {
  describe(`engine controls on ${dialect.name}`, () => {
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

    it('cancels a running workflow; a cancelled workflow cannot be cancelled or advanced again', async () => {
      const wf = await rt.start(await definition(TWO_STEPS));
      const cancelled = await rt.cancel(wf.id, { reason: 'customer walked away' });
      expect(cancelled.status).toBe('CANCELLED');
      await expect(rt.cancel(wf.id)).rejects.toMatchObject({ code: 'WORKFLOW_TERMINAL' });
      await expect(rt.next(wf.id)).rejects.toMatchObject({ code: 'WORKFLOW_NOT_ACTIVE' });
      const last = (await rt.audit(wf.id)).at(-1);
      expect(last).toMatchObject({
        eventType: 'WORKFLOW_CANCELLED',
        eventData: { reason: 'customer walked away', previous_status: 'ACTIVE' },
      });
      const heartbeat = await handle.store.db
        .selectFrom('workflow_heartbeats')
        .selectAll()
        .where('workflow_id', '=', wf.id)
        .execute();
      expect(heartbeat).toEqual([]);
    });

    it('settles a workflow another drive finished meanwhile, instead of refusing it as not ACTIVE', async () => {
      const started = await rt.start(await definition(TWO_STEPS));
      expect(started.status).toBe('ACTIVE');
      // another drive (a resumed parent, a recovery) takes it to the end first
      const other = engineFor(handle);
      expect((await other.runUntilSettled(started.id)).status).toBe('COMPLETED');
      await other.close();
      // this caller still holds the ACTIVE record it was given
      const settled = await rt.runUntilSettled(started.id, started);
      expect(settled).toMatchObject({ id: started.id, status: 'COMPLETED' });
    });

    it('pauses and resumes by operator, returning to the previous status', async () => {
      const wf = await rt.start(await definition(TWO_STEPS));
      const paused = await rt.pause(wf.id);
      expect(paused.status).toBe('PAUSED');
      await expect(rt.next(wf.id)).rejects.toMatchObject({ code: 'WORKFLOW_NOT_ACTIVE' });
      const back = await rt.resume(wf.id);
      expect(back).toMatchObject({ status: 'ACTIVE', currentStep: 'second' });
      expect((await rt.next(wf.id)).status).toBe('COMPLETED');
    });

    it('retries a failed workflow from the failed step or a named step, and refuses to retry a completed one', async () => {
      const def = await definition(`
workflow_type: flaky
automate_next: true
steps:
  - { name: first, type: STANDARD, function: steps.mark }
  - { name: risky, type: STANDARD, function: steps.ship }
`);
      const failed = await rt.start(def, { ship_fails: true });
      expect(failed.status).toBe('FAILED');
      const again = await rt.retry(failed.id);
      expect(again.status).toBe('FAILED');
      const fixed = await rt.retry(failed.id, { input: { ship_fails: false } });
      expect(fixed).toMatchObject({
        status: 'COMPLETED',
        state: { shipped: true, visited: ['first'] },
      });
      await expect(rt.retry(fixed.id)).rejects.toMatchObject({ code: 'WORKFLOW_NOT_RETRYABLE' });

      const other = await rt.start(def, { ship_fails: true });
      await expect(rt.retry(other.id, { fromStep: 'nope' })).rejects.toMatchObject({
        code: 'UNKNOWN_STEP',
      });
      const fromStart = await rt.retry(other.id, {
        fromStep: 'first',
        input: { ship_fails: false },
      });
      expect(fromStart).toMatchObject({
        status: 'COMPLETED',
        state: { visited: ['first', 'first'] },
      });
      const retried = (await rt.audit(other.id)).filter((e) => e.eventType === 'WORKFLOW_RETRIED');
      expect(retried.map((e) => e.eventData.from_step)).toEqual(['first']);
    });

    it('keeps running workflows on their definition snapshot while new ones use the new version', async () => {
      const v1 = await definition(`
workflow_type: versioned
workflow_version: '1'
steps:
  - { name: a, type: STANDARD, function: steps.version_one }
  - { name: b, type: STANDARD, function: steps.version_one }
`);
      const v2 = await definition(`
workflow_type: versioned
workflow_version: '2'
steps:
  - { name: a, type: STANDARD, function: steps.version_two }
  - { name: b, type: STANDARD, function: steps.version_two }
`);
      rt.registry.register(v1);
      const old = await rt.start('versioned');
      expect(old).toMatchObject({ workflowVersion: '1', state: { ran: 'v1' } });
      rt.registry.register(v2);
      const fresh = await rt.start('versioned');
      expect(fresh).toMatchObject({ workflowVersion: '2', state: { ran: 'v2' } });
      const oldDone = await rt.next(old.id);
      expect(oldDone).toMatchObject({
        status: 'COMPLETED',
        workflowVersion: '1',
        state: { ran: 'v1' },
      });
      expect(oldDone.definitionSnapshot).toMatchObject({ workflow_version: '1' });
      expect((await rt.next(fresh.id)).state.ran).toBe('v2');
    });

    it('returns the first workflow when started twice with the same idempotency key, also concurrently', async () => {
      const def = await definition(TWO_STEPS);
      const first = await rt.start(def, { n: 1 }, { idempotencyKey: 'pos-17:txn-42' });
      const second = await rt.start(def, { n: 2 }, { idempotencyKey: 'pos-17:txn-42' });
      expect(second.id).toBe(first.id);
      expect(second.state.n).toBe(1);
      const racing = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          rt.start(def, { n }, { idempotencyKey: 'pos-17:txn-43', run: false }),
        ),
      );
      expect(new Set(racing.map((w) => w.id)).size).toBe(1);
      expect(await rt.list({ workflowType: 'two_steps' })).toHaveLength(2);
    });

    it('rejects an unknown workflow type, non-object data and an unknown id with typed errors', async () => {
      rt.registry.register(await definition(TWO_STEPS));
      await expect(rt.start('no_such_type')).rejects.toMatchObject({
        code: 'UNKNOWN_WORKFLOW_TYPE',
        message: expect.stringContaining('two_steps') as string,
      });
      await expect(rt.start('two_steps', [1, 2] as never)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
      await expect(rt.get('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
        code: 'WORKFLOW_NOT_FOUND',
      });
      await expect(rt.next('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
        code: 'WORKFLOW_NOT_FOUND',
      });
      expect(await rt.list()).toEqual([]);
    });

    it('lists workflows by status', async () => {
      const def = await definition(TWO_STEPS);
      const a = await rt.start(def);
      const b = await rt.start(def);
      await rt.next(b.id);
      expect((await rt.list({ status: 'ACTIVE' })).map((w) => w.id)).toEqual([a.id]);
      expect((await rt.list({ status: 'COMPLETED' })).map((w) => w.id)).toEqual([b.id]);
    });
  });
}
