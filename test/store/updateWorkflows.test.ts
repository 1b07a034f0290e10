/**
 * Batched step-commit updates (updateWorkflows): the version check, and on SQLite an
 * unchanged status left out of the UPDATE so its index entry is not rewritten.
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  getWorkflow,
  insertWorkflow,
  updateWorkflows,
  type WorkflowRowUpdate,
} from '../../runtime/index.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const update = (id: string, version: number, extra: Partial<WorkflowRowUpdate> = {}) => ({
  id,
  expectedVersion: version,
  status: 'ACTIVE' as const,
  currentStepIndex: version + 1,
  currentStep: `step_${version + 1}`,
  state: { amount_minor: 1250, step: version + 1 },
  actorSnapshot: { value: `step_${version + 1}` },
  ...extra,
});

for (const dialect of DIALECTS) {
  describe(`updateWorkflows on ${dialect.name}`, () => {
    let handle: TestStore | undefined;
    afterEach(async () => {
      await handle?.close();
      handle = undefined;
    });

    it('writes each row at its expected version, the status whether or not it changed', async () => {
      handle = await openWithSchema(dialect);
      const { store } = handle;
      const id = randomUUID();
      await insertWorkflow(store, { id, workflowType: 'pos_payment', status: 'ACTIVE', state: {} });
      expect(await updateWorkflows(store, [update(id, 0, { statusBefore: 'ACTIVE' })])).toEqual(
        new Set([id]),
      );
      expect(await getWorkflow(store, id)).toMatchObject({
        status: 'ACTIVE',
        version: 1,
        currentStep: 'step_1',
        state: { step: 1 },
      });
      const done = update(id, 1, { status: 'COMPLETED', statusBefore: 'ACTIVE' });
      expect(await updateWorkflows(store, [done])).toEqual(new Set([id]));
      expect(await getWorkflow(store, id)).toMatchObject({ status: 'COMPLETED', version: 2 });
      // a stale version updates nothing, with or without statusBefore
      expect(await updateWorkflows(store, [update(id, 1, { statusBefore: 'COMPLETED' })])).toEqual(
        new Set(),
      );
      expect(await getWorkflow(store, id)).toMatchObject({ status: 'COMPLETED', version: 2 });
    });
  });
}

describe('updateWorkflows on SQLite', () => {
  it('leaves an unchanged status out of the UPDATE: one WAL page fewer per commit', async () => {
    const handle = await openWithSchema(DIALECTS.find((d) => d.name === 'sqlite')!);
    try {
      const { store } = handle;
      const wal = `${handle.location}-wal`;
      const id = randomUUID();
      await insertWorkflow(store, { id, workflowType: 'pos_payment', status: 'ACTIVE', state: {} });
      // the same commit twice, the status set or left alone; the WAL only grows in between
      // (1,000 pages before a checkpoint)
      const grows = async (version: number, extra: Partial<WorkflowRowUpdate>) => {
        const before = statSync(wal).size;
        await store.transaction((tx) => updateWorkflows(tx, [update(id, version, extra)]));
        return statSync(wal).size - before;
      };
      await grows(0, {}); // both rows' pages are in the WAL from here on
      const withStatus = await grows(1, {});
      const withoutStatus = await grows(2, { statusBefore: 'ACTIVE' });
      const page = 4096 + 24; // a WAL frame: the page and its header
      expect(withStatus - withoutStatus).toBe(page);
      expect(await getWorkflow(store, id)).toMatchObject({ status: 'ACTIVE', version: 3 });
    } finally {
      await handle.close();
    }
  });
});
