/**
 * The task queue's store operations on every dialect: a claim returns the claimed rows and
 * takes over expired leases; a batch of outcomes is recorded only for the tasks the worker
 * still holds, with their audit rows, and returns their groups as they now stand. On
 * PostgreSQL and PGlite, the one-statement completion applies a prepared settle only when the
 * task is its group's only one and the workflow is still at the expected version.
 */
import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  claimTasks,
  getWorkflow,
  insertTasks,
  insertWorkflow,
  listAuditEvents,
  listTasks,
  type Store,
} from '../../runtime/store/index.js';
import { claimTasksPostgres } from '../../runtime/store/postgres/claimTasksPostgres.js';
import {
  settleTasksPostgres,
  settleTasksStatement,
  type TaskSettlement,
} from '../../runtime/store/postgres/settleTasksPostgres.js';
import { finishTasksStatement } from '../../runtime/store/postgres/finishTasksPostgres.js';
import { finishTasks, type TaskOutcome } from '../../runtime/store/tasks/finishTasks.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

async function workflowWithTasks(store: Store, names: readonly string[], group = 'fan:1') {
  const workflowId = randomUUID();
  await insertWorkflow(store, {
    id: workflowId,
    workflowType: 'queue_test',
    status: 'PENDING_ASYNC',
    state: { n: 1 },
    definitionSnapshot: { workflow_type: 'queue_test', steps: [] },
  });
  const ids = names.map(() => randomUUID());
  await insertTasks(
    store,
    names.map((name, i) => ({
      id: ids[i]!,
      workflowId,
      stepName: 'fan',
      functionPath: `steps.${name}`,
      state: { n: 1 },
      context: { taskName: name },
      parallelGroup: group,
      taskIndex: i,
      maxAttempts: 3,
      // distinct due times, so claims take the tasks in declaration order
      runAfter: at(i),
    })),
  );
  return { workflowId, ids };
}

const settleOf = (workflowId: string, expectedVersion: number) => ({
  update: {
    id: workflowId,
    expectedVersion,
    status: 'COMPLETED' as const,
    currentStepIndex: 1,
    currentStep: null,
    state: { n: 1, done: true },
    actorSnapshot: { value: 'completed' },
  },
  audit: [
    { workflowId, eventType: 'STEP_EXECUTED' as const, stepName: 'fan' },
    { workflowId, eventType: 'WORKFLOW_COMPLETED' as const },
  ],
  metrics: [],
  logs: [],
  heartbeat: 'delete' as const,
});

/** Relations a statement reads with a sequential scan (EXPLAIN ANALYZE runs it). */
async function seqScanned(store: Store, compiled: CompiledQuery): Promise<string[]> {
  const { rows } = await store.db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`EXPLAIN (ANALYZE, FORMAT JSON) ${compiled.sql}`, [...compiled.parameters]),
  );
  const raw = rows[0]!['QUERY PLAN'];
  const plan = JSON.stringify(typeof raw === 'string' ? JSON.parse(raw) : raw);
  expect(plan).toContain('"Relation Name":"tasks"');
  return [...plan.matchAll(/"Node Type":"Seq Scan"[^{}]*?"Relation Name":"(\w+)"/g)].map(
    (m) => m[1]!,
  );
}

const claim = (store: Store, workerId: string, limit: number, now: Date) =>
  claimTasks(store, { workerId, limit, leaseMs: 1000, now });

const completed = (workflowId: string, taskId: string, result: object): TaskOutcome => ({
  taskId,
  workflowId,
  group: 'fan:1',
  finish: { status: 'COMPLETED', result: { ...result } },
  audit: {
    workflowId,
    eventType: 'TASK_COMPLETED',
    stepName: 'fan',
    eventData: { task_id: taskId },
  },
  logs: [{ workflowId, stepName: 'fan', level: 'info', message: `ran ${taskId}` }],
});

for (const dialect of DIALECTS) {
  describe(`task queue on ${dialect.name}`, () => {
    let handle: TestStore;
    let store: Store;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      store = handle.store;
    });
    afterEach(async () => {
      await handle.close();
    });

    it('claims due tasks and returns them whole, without a second read', async () => {
      const { workflowId, ids } = await workflowWithTasks(store, ['a', 'b']);
      const claimed = await claim(store, 'worker-a', 5, at(10));
      expect(claimed).toMatchObject([
        {
          id: ids[0],
          workflowId,
          functionPath: 'steps.a',
          context: { taskName: 'a' },
          attempts: 1,
        },
        { id: ids[1], workflowId, functionPath: 'steps.b', taskIndex: 1, maxAttempts: 3 },
      ]);
      expect(claimed[0]!.state).toEqual({ n: 1 });
      // PostgreSQL and PGlite return the workflow row with the claim, all but its definition
      if (dialect.name !== 'sqlite') {
        expect(claimed[0]!.workflow).toMatchObject({ id: workflowId, version: 0 });
        expect(claimed[0]!.workflow!.definitionSnapshot).toBeNull();
      }
      expect(await claim(store, 'worker-b', 5, at(10))).toEqual([]);
    });

    it('takes over a task whose lease expired in the claim itself', async () => {
      const { ids } = await workflowWithTasks(store, ['a']);
      expect(await claim(store, 'dead-worker', 1, at(10))).toHaveLength(1);
      expect(await claim(store, 'worker-b', 1, at(1009))).toEqual([]);
      const [taken] = await claim(store, 'worker-b', 1, at(1011));
      expect(taken).toMatchObject({ id: ids[0], attempts: 2 });
      expect((await listTasks(store, taken!.workflowId))[0]).toMatchObject({
        status: 'CLAIMED',
        workerId: 'worker-b',
      });
    });

    it('claims tasks whose lease ran out before due ones, and due ones oldest first', async () => {
      const later = await workflowWithTasks(store, ['x']); // due at 0
      const early = await workflowWithTasks(store, ['a', 'b']); // due at 0 and 1
      await store.db
        .updateTable('tasks')
        .set({ run_after: store.codec.time(at(5)) })
        .where('workflow_id', '=', later.workflowId)
        .execute();
      // at 3 only the early workflow's tasks are due; their claim lapses at 1003
      expect((await claim(store, 'dead-worker', 5, at(3))).map((t) => t.id)).toEqual(early.ids);
      // at 1010 the later task is due too, but the lapsed claims come first
      expect((await claim(store, 'worker-b', 2, at(1010))).map((t) => t.id)).toEqual(early.ids);
      expect((await claim(store, 'worker-b', 2, at(1010))).map((t) => t.id)).toEqual(later.ids);
    });

    it('serves a worker its regions and tasks without one', async () => {
      const workflowId = (await workflowWithTasks(store, ['free'])).workflowId;
      const eu = randomUUID();
      await insertTasks(store, [
        {
          id: eu,
          workflowId,
          stepName: 'fan',
          functionPath: 'steps.eu',
          state: {},
          context: {},
          dataRegion: 'eu',
          runAfter: at(0),
        },
      ]);
      const regions = (list: string[]) =>
        claimTasks(store, { workerId: 'w', limit: 5, leaseMs: 1000, now: at(10), regions: list });
      expect((await regions(['us'])).map((t) => t.functionPath)).toEqual(['steps.free']);
      expect((await regions(['us', 'eu'])).map((t) => t.id)).toEqual([eu]);
    });

    it('serves no region-bound task to a worker with an empty region list', async () => {
      await workflowWithTasks(store, ['a']);
      expect(
        await claimTasks(store, {
          workerId: 'w',
          limit: 1,
          leaseMs: 1000,
          now: at(10),
          regions: [],
        }),
      ).toHaveLength(1); // the task has no region
    });

    it('records only the outcomes the worker still holds, and returns their groups', async () => {
      const { workflowId, ids } = await workflowWithTasks(store, ['a', 'b', 'c']);
      await claim(store, 'worker-a', 2, at(10)); // a and b
      await claim(store, 'worker-b', 1, at(10)); // c
      const finished = await store.transaction((tx) =>
        finishTasks(
          tx,
          'worker-a',
          [completed(workflowId, ids[0]!, { a: 1 }), completed(workflowId, ids[2]!, { c: 3 })],
          at(20),
        ),
      );
      expect([...finished.recorded]).toEqual([ids[0]]);
      expect([...finished.groups.values()]).toEqual([
        [
          expect.objectContaining({ id: ids[0], status: 'COMPLETED', result: { a: 1 }, name: 'a' }),
          expect.objectContaining({ id: ids[1], status: 'CLAIMED', result: null, name: 'b' }),
          expect.objectContaining({ id: ids[2], status: 'CLAIMED', result: null, name: 'c' }),
        ],
      ]);
      const audit = await listAuditEvents(store, workflowId);
      expect(audit.map((e) => [e.eventType, e.eventData.task_id])).toEqual([
        ['TASK_COMPLETED', ids[0]],
      ]);
      expect((await listTasks(store, workflowId)).map((t) => [t.status, t.workerId])).toEqual([
        ['COMPLETED', 'worker-a'],
        ['CLAIMED', 'worker-a'],
        ['CLAIMED', 'worker-b'],
      ]);
    });

    it('puts a retried task back in the queue for later', async () => {
      const { workflowId, ids } = await workflowWithTasks(store, ['a']);
      await claim(store, 'worker-a', 1, at(10));
      await store.transaction((tx) =>
        finishTasks(
          tx,
          'worker-a',
          [
            {
              ...completed(workflowId, ids[0]!, {}),
              finish: { status: 'RETRY', error: 'boom', runAfter: at(5000) },
              audit: { workflowId, eventType: 'STEP_FAILED', stepName: 'fan' },
            },
          ],
          at(20),
        ),
      );
      expect((await listTasks(store, workflowId))[0]).toMatchObject({
        status: 'PENDING',
        workerId: null,
        error: 'boom',
      });
      expect(await claim(store, 'worker-a', 1, at(4999))).toEqual([]);
      expect(await claim(store, 'worker-a', 1, at(5000))).toHaveLength(1);
    });

    if (dialect.name === 'sqlite') return;

    describe('with statistics taken when the queue was nearly empty', () => {
      // a backlog queued faster than autovacuum analyzes: the planner believes the table
      // holds the two tasks it saw, and must still never read the whole backlog
      let fan: { workflowId: string; ids: string[] };
      const next = { workerId: 'worker-a', limit: 8, leaseMs: 1000, now: at(10_000) };
      beforeEach(async () => {
        fan = await workflowWithTasks(store, ['a', 'b']);
        await claim(store, 'worker-a', 2, at(10));
        await sql`ANALYZE tasks`.execute(store.db);
        for (let w = 0; w < 6; w++)
          await workflowWithTasks(
            store,
            Array.from({ length: 500 }, (_, i) => `t${i}`),
            'big:1',
          );
      });

      it('claims by primary key', async () => {
        const { query, parameters } = claimTasksPostgres(store, next);
        const compiled = query.compile(store.db);
        expect(await seqScanned(store, { ...compiled, parameters })).not.toContain('tasks');
      });

      it('records a group completion by the workflow index', async () => {
        const { compile, parameters } = finishTasksStatement(
          store,
          'worker-a',
          [completed(fan.workflowId, fan.ids[0]!, {})],
          at(20),
        );
        expect(await seqScanned(store, { ...compile(), parameters })).not.toContain('tasks');
      });

      it('settles a one-task group and claims the next tasks by index', async () => {
        const { compile, parameters } = settleTasksStatement(
          store,
          'worker-a',
          [{ ...completed(fan.workflowId, fan.ids[0]!, {}), settle: settleOf(fan.workflowId, 0) }],
          at(20),
          next,
        );
        expect(await seqScanned(store, { ...compile(), parameters })).not.toContain('tasks');
      });
    });

    describe('one-statement completion', () => {
      const complete = async (completions: TaskSettlement[]) =>
        (await settleTasksPostgres(store, 'worker-a', completions, at(20))).results;

      it('records an outcome with the settle prepared for it, audit rows in order', async () => {
        const { workflowId, ids } = await workflowWithTasks(store, ['a']);
        await claim(store, 'worker-a', 1, at(10));
        const results = await complete([
          { ...completed(workflowId, ids[0]!, { a: 1 }), settle: settleOf(workflowId, 0) },
        ]);
        expect(results.get(ids[0]!)).toBe('recorded');
        expect(await getWorkflow(store, workflowId)).toMatchObject({
          status: 'COMPLETED',
          version: 1,
          state: { n: 1, done: true },
        });
        expect((await listAuditEvents(store, workflowId)).map((e) => e.eventType)).toEqual([
          'TASK_COMPLETED',
          'STEP_EXECUTED',
          'WORKFLOW_COMPLETED',
        ]);
        expect((await listTasks(store, workflowId))[0]).toMatchObject({
          status: 'COMPLETED',
          result: { a: 1 },
        });
      });

      it('writes the logs, heartbeats and heartbeat deletes of a batch that has them, and batches without', async () => {
        const ended = await workflowWithTasks(store, ['a']);
        const going = await workflowWithTasks(store, ['a']);
        const quiet = await workflowWithTasks(store, ['a']);
        await claim(store, 'worker-a', 10, at(10));
        await sql`INSERT INTO workflow_heartbeats (workflow_id, worker_id, last_heartbeat)
          VALUES (${ended.workflowId}, 'worker-a', ${at(10)})`.execute(store.db);
        const goingOn = settleOf(going.workflowId, 0);
        // with logs, a heartbeat delete (ended) and a heartbeat written (going, which goes on)
        const first = await complete([
          {
            ...completed(ended.workflowId, ended.ids[0]!, {}),
            settle: settleOf(ended.workflowId, 0),
          },
          {
            ...completed(going.workflowId, going.ids[0]!, {}),
            logs: [],
            settle: {
              ...goingOn,
              update: { ...goingOn.update, status: 'ACTIVE', currentStep: 'next' },
              audit: [goingOn.audit[0]!],
              heartbeat: {
                workflowId: going.workflowId,
                workerId: 'worker-a',
                currentStep: 'next',
              },
            },
          },
        ]);
        // none of the three kinds
        const second = await complete([
          {
            ...completed(quiet.workflowId, quiet.ids[0]!, {}),
            logs: [],
            settle: { ...settleOf(quiet.workflowId, 0), heartbeat: 'keep' },
          },
        ]);
        expect([...first.values(), ...second.values()]).toEqual([
          'recorded',
          'recorded',
          'recorded',
        ]);
        const logged = await sql<{ workflow_id: string; message: string }>`
          SELECT workflow_id, message FROM workflow_execution_logs`.execute(store.db);
        expect(logged.rows).toEqual([
          { workflow_id: ended.workflowId, message: `ran ${ended.ids[0]!}` },
        ]);
        const beating = await sql<{ workflow_id: string; current_step: string | null }>`
          SELECT workflow_id, current_step FROM workflow_heartbeats`.execute(store.db);
        expect(beating.rows).toEqual([{ workflow_id: going.workflowId, current_step: 'next' }]);
        expect(await getWorkflow(store, going.workflowId)).toMatchObject({
          status: 'ACTIVE',
          version: 1,
        });
        expect(await getWorkflow(store, quiet.workflowId)).toMatchObject({
          status: 'COMPLETED',
          version: 1,
        });
      });

      it('defers an outcome whose settle no longer applies, and records nothing of it', async () => {
        const stale = await workflowWithTasks(store, ['a']);
        const shared = await workflowWithTasks(store, ['a', 'b']);
        await claim(store, 'worker-a', 10, at(10));
        const results = await complete([
          // the workflow moved on since the claim
          {
            ...completed(stale.workflowId, stale.ids[0]!, {}),
            settle: settleOf(stale.workflowId, 7),
          },
          // the task is not its group's only one
          {
            ...completed(shared.workflowId, shared.ids[0]!, {}),
            settle: settleOf(shared.workflowId, 0),
          },
        ]);
        expect(results.get(stale.ids[0]!)).toBe('deferred');
        expect(results.get(shared.ids[0]!)).toBe('deferred');
        for (const { workflowId } of [stale, shared]) {
          expect(await listAuditEvents(store, workflowId)).toEqual([]);
          expect((await listTasks(store, workflowId))[0]).toMatchObject({ status: 'CLAIMED' });
          expect((await getWorkflow(store, workflowId))?.version).toBe(0);
        }
      });

      it('leaves a task another worker took over alone', async () => {
        const { workflowId, ids } = await workflowWithTasks(store, ['a']);
        await claim(store, 'worker-a', 1, at(10));
        await claim(store, 'worker-b', 1, at(2000));
        const results = await complete([
          { ...completed(workflowId, ids[0]!, {}), settle: settleOf(workflowId, 0) },
        ]);
        expect(results.get(ids[0]!)).toBe('lost');
        expect(await listAuditEvents(store, workflowId)).toEqual([]);
        expect((await listTasks(store, workflowId))[0]).toMatchObject({
          status: 'CLAIMED',
          workerId: 'worker-b',
        });
      });
    });
  });
}
