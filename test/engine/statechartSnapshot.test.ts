/**
 * `runtime.statechart()` reads the workflow's status and its active state from one stored
 * snapshot, so a status column that disagrees with the snapshot (written apart from it) can
 * never show a workflow PENDING_ASYNC in a state the snapshot calls something else.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

for (const dialect of DIALECTS.filter((d) => d.name !== 'pglite')) {
  describe(`statechart on ${dialect.name}`, () => {
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

    it('reports the status of the snapshot it reports the active state of', async () => {
      const def = await definition(`
workflow_type: chart_status
automate_next: true
steps:
  - { name: ask, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: done, type: STANDARD, function: steps.mark }
`);
      const wf = await rt.start(def);
      expect(wf.status).toBe('WAITING_HUMAN_INPUT');
      const agreed = await rt.statechart(wf.id);
      expect(agreed.record.status).toBe('WAITING_HUMAN_INPUT');
      expect(agreed.position).toEqual({ key: 'ask', sub: 'waitingHuman' });

      await handle.store.db
        .updateTable('workflow_executions')
        .set({ status: 'PENDING_ASYNC' })
        .where('id', '=', wf.id)
        .execute();
      expect((await rt.get(wf.id)).status).toBe('PENDING_ASYNC');
      const chart = await rt.statechart(wf.id);
      expect(chart.position).toEqual({ key: 'ask', sub: 'waitingHuman' });
      expect(chart.record.status).toBe('WAITING_HUMAN_INPUT');
      expect(chart.record.version).toBe(agreed.record.version);
    });
  });
}
