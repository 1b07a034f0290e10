/**
 * Batched step-commit updates (updateWorkflows): the version check; on SQLite an unchanged
 * status left out of the UPDATE so its index entry is not rewritten; on PostgreSQL and PGlite
 * rows found by primary key also when the statistics are stale.
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import {
  getWorkflow,
  insertWorkflow,
  insertWorkflows,
  updateWorkflows,
  type WorkflowRowUpdate,
} from '../../runtime/index.js';
import { updateWorkflowsBatchStatement } from '../../runtime/store/postgres/updateWorkflowsBatch.js';
import {
  CLOUD_DIALECTS,
  DIALECTS,
  openWithSchema,
  type TestStore,
  EDGE_DIALECT,
} from '../support/stores.js';

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
    const handle = await openWithSchema(EDGE_DIALECT);
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

for (const dialect of CLOUD_DIALECTS) {
  describe(`updateWorkflows on ${dialect.name}, with statistics taken when the table was nearly empty`, () => {
    let handle: TestStore | undefined;
    afterEach(async () => {
      await handle?.close();
      handle = undefined;
    });

    it('updates by primary key, never reading the whole table', async () => {
      handle = await openWithSchema(dialect);
      const { store } = handle;
      // a burst of starts faster than autovacuum analyzes: the planner believes the table
      // holds the two workflows it saw
      const workflow = (id: string) => ({
        id,
        workflowType: 'pos_payment',
        status: 'ACTIVE' as const,
        state: { amount_minor: 1250 },
      });
      await insertWorkflows(store, [workflow(randomUUID()), workflow(randomUUID())], new Date());
      await sql`ANALYZE workflow_executions`.execute(store.db);
      const ids = Array.from({ length: 3000 }, () => randomUUID());
      for (let i = 0; i < ids.length; i += 500)
        await insertWorkflows(store, ids.slice(i, i + 500).map(workflow), new Date());
      const updates = ids.slice(0, 8).map((id) => update(id, 0));
      const compiled = updateWorkflowsBatchStatement(store, updates, new Date()).compile(store.db);
      const { rows } = await store.db.executeQuery<{ 'QUERY PLAN': unknown }>(
        CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${compiled.sql}`, [
          ...compiled.parameters,
        ]),
      );
      const raw = rows[0]!['QUERY PLAN'];
      const plan = JSON.stringify(typeof raw === 'string' ? JSON.parse(raw) : raw);
      expect(plan).toContain('"Relation Name":"workflow_executions"');
      expect(plan).not.toMatch(
        /"Node Type":"Seq Scan"[^{}]*?"Relation Name":"workflow_executions"/,
      );
      // and it did update them (EXPLAIN ANALYZE runs the statement)
      expect(await getWorkflow(store, ids[0]!)).toMatchObject({
        version: 1,
        currentStep: 'step_1',
      });
    });
  });
}
