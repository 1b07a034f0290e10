/**
 * One conformance suite over every store dialect (Kysely's `for (const dialect of DIALECTS)`):
 * the same operations must behave the same on PostgreSQL, PGlite and SQLite.
 */
import { asCloud } from '../../runtime/index.js';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  appendAuditEvents,
  appendStepLogs,
  beatHeartbeat,
  ConflictError,
  deleteWorkflow,
  getWorkflow,
  getWorkflowByIdempotencyKey,
  insertTasks,
  insertWorkflow,
  listAuditEvents,
  listStaleHeartbeats,
  listTasks,
  listWorkflows,
  recordCompensation,
  recordMetrics,
  StoreError,
  updateWorkflow,
  upsertWorkflow,
  type Store,
} from '../../runtime/store/index.js';
import { DIALECTS, openWithSchema, rawExec, type TestStore } from '../support/stores.js';

async function count(store: Store, table: string, workflowId: string): Promise<number> {
  const column = table === 'workflow_executions' ? 'id' : 'workflow_id';
  const r = await sql<{
    n: number | string;
  }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${workflowId}`.execute(
    store.db,
  );
  return Number(r.rows[0]!.n);
}

const newWorkflow = (overrides: Partial<Parameters<typeof insertWorkflow>[1]> = {}) => ({
  id: randomUUID(),
  workflowType: 'payment_authorization',
  status: 'ACTIVE' as const,
  state: { amount: 1250, card: { last4: '4242' }, note: 'café ☕' },
  ...overrides,
});

for (const dialect of DIALECTS) {
  describe(`store conformance: ${dialect.name}`, () => {
    let handle: TestStore;
    let store: Store;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      store = handle.store;
    });
    afterEach(async () => {
      await handle.close();
    });

    it('round-trips a workflow with JSON, timestamps and defaults', async () => {
      const created = new Date('2026-01-02T03:04:05.678Z');
      const wf = newWorkflow({
        workflowVersion: '3',
        definitionSnapshot: {
          workflow_type: 'payment_authorization',
          steps: [{ name: 'a', type: 'STANDARD' }],
        },
        ownerId: 'merchant-1',
        createdAt: created,
        metadata: { source: 'test' },
      });
      await insertWorkflow(store, wf);
      const got = await getWorkflow(store, wf.id);
      expect(got).toMatchObject({
        id: wf.id,
        workflowType: 'payment_authorization',
        workflowVersion: '3',
        status: 'ACTIVE',
        currentStepIndex: 0,
        state: wf.state,
        definitionSnapshot: wf.definitionSnapshot,
        ownerId: 'merchant-1',
        version: 0,
        metadata: { source: 'test' },
        parentWorkflowId: null,
      });
      expect(got!.createdAt.toISOString()).toBe(created.toISOString());
      expect(await getWorkflow(store, randomUUID())).toBeUndefined();
    });

    it('rejects a second workflow with the same idempotency key', async () => {
      const first = newWorkflow({ idempotencyKey: 'pos-17:txn-9' });
      await insertWorkflow(store, first);
      await expect(
        insertWorkflow(store, newWorkflow({ idempotencyKey: 'pos-17:txn-9' })),
      ).rejects.toBeInstanceOf(ConflictError);
      expect((await getWorkflowByIdempotencyKey(store, 'pos-17:txn-9'))?.id).toBe(first.id);
    });

    it('enforces the status CHECK constraint', async () => {
      const bad = newWorkflow({ status: 'RUNNING' as never });
      await expect(insertWorkflow(store, bad)).rejects.toBeInstanceOf(StoreError);
      expect(await getWorkflow(store, bad.id)).toBeUndefined();
    });

    it('updates with an optimistic version check', async () => {
      const wf = newWorkflow();
      await insertWorkflow(store, wf);
      const v1 = await updateWorkflow(store, wf.id, 0, {
        status: 'WAITING_HUMAN_INPUT',
        currentStepIndex: 2,
        currentStep: 'review',
        state: { x: 1 },
      });
      expect(v1).toBe(1);
      await expect(updateWorkflow(store, wf.id, 0, { status: 'COMPLETED' })).rejects.toBeInstanceOf(
        ConflictError,
      );
      const got = await getWorkflow(store, wf.id);
      expect(got).toMatchObject({
        status: 'WAITING_HUMAN_INPUT',
        currentStepIndex: 2,
        currentStep: 'review',
        state: { x: 1 },
        version: 1,
      });
    });

    it('upserts: inserts, then overwrites mutable columns and bumps the version', async () => {
      const wf = newWorkflow();
      await upsertWorkflow(store, wf);
      await upsertWorkflow(store, {
        ...wf,
        status: 'COMPLETED',
        state: { done: true },
        currentStepIndex: 4,
      });
      expect(await getWorkflow(store, wf.id)).toMatchObject({
        status: 'COMPLETED',
        state: { done: true },
        currentStepIndex: 4,
        version: 1,
      });
    });

    it('upsert reports a collision on another unique key as a conflict', async () => {
      await upsertWorkflow(store, newWorkflow({ idempotencyKey: 'dup-key' }));
      await expect(
        upsertWorkflow(store, newWorkflow({ idempotencyKey: 'dup-key' })),
      ).rejects.toBeInstanceOf(ConflictError);
    });

    it('lists by status and type, newest first, with keyset paging', async () => {
      const base = Date.parse('2026-03-01T00:00:00Z');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const wf = newWorkflow({
          status: i % 2 === 0 ? 'COMPLETED' : 'FAILED',
          createdAt: new Date(base + i * 1000),
        });
        ids.push(wf.id);
        await insertWorkflow(store, wf);
      }
      const completed = await listWorkflows(store, { status: 'COMPLETED' });
      expect(completed.map((w) => w.id)).toEqual([ids[4], ids[2], ids[0]]);
      const page1 = await listWorkflows(store, { limit: 2 });
      const page2 = await listWorkflows(store, {
        limit: 2,
        before: { createdAt: page1[1]!.createdAt, id: page1[1]!.id },
      });
      expect([...page1, ...page2].map((w) => w.id)).toEqual([ids[4], ids[3], ids[2], ids[1]]);
      expect(await listWorkflows(store, { workflowType: 'nope' })).toEqual([]);
    });

    it('keeps the audit trail in order', async () => {
      const wf = newWorkflow();
      await insertWorkflow(store, wf);
      await appendAuditEvents(store, [
        { workflowId: wf.id, eventType: 'WORKFLOW_STARTED' },
        {
          workflowId: wf.id,
          eventType: 'STEP_EXECUTED',
          stepName: 'check',
          eventData: { durationMs: 3 },
        },
      ]);
      await appendAuditEvents(store, [{ workflowId: wf.id, eventType: 'WORKFLOW_COMPLETED' }]);
      const trail = await listAuditEvents(store, wf.id);
      expect(trail.map((e) => e.eventType)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED',
        'WORKFLOW_COMPLETED',
      ]);
      expect(trail[1]).toMatchObject({ stepName: 'check', eventData: { durationMs: 3 } });
    });

    it('refreshes heartbeats and finds stale ones oldest first', async () => {
      const a = newWorkflow();
      const b = newWorkflow();
      await insertWorkflow(store, a);
      await insertWorkflow(store, b);
      await beatHeartbeat(store, {
        workflowId: a.id,
        workerId: 'w1',
        at: new Date('2026-01-01T00:00:00Z'),
      });
      await beatHeartbeat(store, {
        workflowId: b.id,
        workerId: 'w1',
        at: new Date('2026-01-01T00:00:10Z'),
      });
      const stale = await listStaleHeartbeats(store, new Date('2026-01-01T00:01:00Z'));
      expect(stale.map((s) => s.workflowId)).toEqual([a.id, b.id]);
      await beatHeartbeat(store, {
        workflowId: a.id,
        workerId: 'w2',
        currentStep: 'pay',
        at: new Date('2026-01-01T00:05:00Z'),
      });
      const after = await listStaleHeartbeats(store, new Date('2026-01-01T00:01:00Z'));
      expect(after.map((s) => s.workflowId)).toEqual([b.id]);
    });

    it('queues tasks in one statement, in declaration order', async () => {
      const wf = newWorkflow();
      await insertWorkflow(store, wf);
      await insertTasks(
        store,
        ['a', 'b', 'c'].map((name, i) => ({
          id: randomUUID(),
          workflowId: wf.id,
          stepName: 'fanout',
          functionPath: `steps.${name}`,
          state: { i },
          context: { task: name },
          parallelGroup: 'fanout',
          taskIndex: i,
        })),
      );
      const tasks = await listTasks(store, wf.id);
      expect(tasks.map((t) => [t.functionPath, t.status, t.taskIndex])).toEqual([
        ['steps.a', 'PENDING', 0],
        ['steps.b', 'PENDING', 1],
        ['steps.c', 'PENDING', 2],
      ]);
    });

    it('cascades a workflow delete to audit, logs, metrics, heartbeat, tasks, compensations and timers', async () => {
      const wf = newWorkflow();
      const other = newWorkflow();
      for (const w of [wf, other]) {
        await insertWorkflow(store, w);
        await appendAuditEvents(store, [{ workflowId: w.id, eventType: 'WORKFLOW_STARTED' }]);
        await appendStepLogs(store, [
          { workflowId: w.id, level: 'info', message: 'hello', stepName: 's' },
        ]);
        await recordMetrics(store, [
          { workflowId: w.id, name: 'step_duration_ms', value: 1.5, stepName: 's' },
        ]);
        await beatHeartbeat(store, { workflowId: w.id, workerId: 'w1' });
        await insertTasks(store, [
          {
            id: randomUUID(),
            workflowId: w.id,
            stepName: 's',
            functionPath: 'x.y',
            state: {},
            context: {},
          },
        ]);
        await recordCompensation(store, {
          workflowId: w.id,
          stepName: 's',
          compensationFunction: 'x.undo',
          status: 'COMPLETED',
          stateBefore: { a: 1 },
          stateAfter: { a: 0 },
        });
        await sql`INSERT INTO workflow_timers (id, workflow_id, timer_kind, due_at) VALUES (${randomUUID()}, ${w.id}, 'PARALLEL_TIMEOUT', ${new Date().toISOString()})`.execute(
          store.db,
        );
      }
      const children = [
        'workflow_audit_log',
        'workflow_execution_logs',
        'workflow_metrics',
        'workflow_heartbeats',
        'tasks',
        'compensation_log',
        'workflow_timers',
      ];
      for (const t of children) expect(await count(store, t, wf.id), t).toBe(1);
      expect(await deleteWorkflow(store, wf.id)).toBe(true);
      for (const t of children) {
        expect(await count(store, t, wf.id), t).toBe(0);
        expect(await count(store, t, other.id), `${t} of the other workflow`).toBe(1);
      }
      expect(await deleteWorkflow(store, wf.id)).toBe(false);
    });

    it('sets a sub-workflow parent link to null when the parent is deleted', async () => {
      const parent = newWorkflow();
      const child = newWorkflow({ parentWorkflowId: parent.id });
      await insertWorkflow(store, parent);
      await insertWorkflow(store, child);
      expect(
        (await listWorkflows(store, { parentWorkflowId: parent.id })).map((w) => w.id),
      ).toEqual([child.id]);
      await deleteWorkflow(store, parent.id);
      expect((await getWorkflow(store, child.id))?.parentWorkflowId).toBeNull();
    });

    it('rejects a child row whose workflow does not exist (foreign keys enforced)', async () => {
      await expect(
        appendAuditEvents(store, [{ workflowId: randomUUID(), eventType: 'WORKFLOW_STARTED' }]),
      ).rejects.toBeInstanceOf(StoreError);
    });

    if (dialect.name !== 'sqlite') {
      it('cascades an edge_devices delete to its device_commands', async () => {
        await rawExec(
          handle,
          `INSERT INTO edge_devices (device_id, device_type) VALUES ('pos-1', 'POS'), ('pos-2', 'POS')`,
        );
        await rawExec(
          handle,
          `INSERT INTO device_commands (command_id, device_id, command_type) VALUES
           ('${randomUUID()}', 'pos-1', 'REBOOT'), ('${randomUUID()}', 'pos-1', 'DIAGNOSTIC'), ('${randomUUID()}', 'pos-2', 'REBOOT')`,
        );
        await asCloud(store)
          .cloud.deleteFrom('edge_devices')
          .where('device_id', '=', 'pos-1')
          .execute();
        const rows = await asCloud(store)
          .cloud.selectFrom('device_commands')
          .select(['device_id'])
          .execute();
        expect(rows).toEqual([{ device_id: 'pos-2' }]);
      });
    }

    it('commits a transaction as a whole or not at all', async () => {
      const wf = newWorkflow();
      await expect(
        store.transaction(async (tx) => {
          await insertWorkflow(tx, wf);
          await appendAuditEvents(tx, [{ workflowId: wf.id, eventType: 'WORKFLOW_STARTED' }]);
          throw new Error('crash before commit');
        }),
      ).rejects.toThrow('crash before commit');
      expect(await getWorkflow(store, wf.id)).toBeUndefined();
      await store.transaction(async (tx) => {
        await insertWorkflow(tx, wf);
        await appendAuditEvents(tx, [{ workflowId: wf.id, eventType: 'WORKFLOW_STARTED' }]);
      });
      expect(await listAuditEvents(store, wf.id)).toHaveLength(1);
    });
  });
}
