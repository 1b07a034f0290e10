/**
 * `saffron run --executor inline | threads | postgres`: inline and threads run the steps and
 * the ASYNC task in this process (threads on a worker-thread pool); postgres leaves the task
 * to `saffron worker` processes and waits for them, with a hint when none claims it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listTasks } from '../../runtime/store/index.js';
import { runCli } from '../support/cli.js';
import { workflowOf } from './engineHelpers.js';
import {
  newTarget,
  startCli,
  statusCounts,
  until,
  workerRuntime,
  writeFixtures,
} from './queueHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-run-executors-'));
const fixtures = writeFixtures(join(dir, 'flows'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('saffron run --executor on SQLite', () => {
  it('threads: runs the steps and the ASYNC task on worker threads to completion', async () => {
    const target = await newTarget('sqlite', dir);
    const run = await runCli(
      [
        'run',
        fixtures.queued,
        '--executor',
        'threads',
        '--data',
        '{"n": 4}',
        '--db',
        target.location,
        '--json',
      ],
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    const wf = workflowOf(run);
    expect(wf.status).toBe('COMPLETED');
    expect(wf.state).toMatchObject({ score: 8, finished: true });
    // threadId is 0 on the main thread
    expect(wf.state.prepare_thread).toBeGreaterThan(0);
    expect(wf.state.score_thread).toBeGreaterThan(0);
    await target.inspect(async (store) => {
      expect(await statusCounts(store)).toEqual({ COMPLETED: 1 });
      const tasks = await listTasks(store, wf.id);
      expect(tasks.map((t) => [t.stepName, t.status])).toEqual([['score', 'COMPLETED']]);
    });
  });

  it('inline (the default here): runs everything on the main thread', async () => {
    const target = await newTarget('sqlite', dir);
    for (const executor of [['--executor', 'inline'], []]) {
      const run = await runCli(
        ['run', fixtures.queued, ...executor, '--data', '{"n": 5}', '--db', target.location],
        { cwd: dir },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/status\s+COMPLETED/);
    }
    await target.inspect(async (store) => {
      const rows = await store.db.selectFrom('workflow_executions').select('state').execute();
      expect(rows).toHaveLength(2);
      for (const r of rows)
        expect(store.codec.parseJson(r.state)).toMatchObject({
          score: 10,
          prepare_thread: 0,
          score_thread: 0,
        });
    });
  });

  it('refuses an unknown executor, listing the choices', async () => {
    const run = await runCli(['run', fixtures.queued, '--executor', 'lambda'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "option '--executor <kind>' argument 'lambda' is invalid. Allowed choices are inline, threads, postgres.",
    );
  });

  it('refuses the postgres executor on SQLite and PGlite', async () => {
    for (const dialect of ['sqlite', 'pglite'] as const) {
      const target = await newTarget(dialect, dir);
      const run = await runCli(
        ['run', fixtures.queued, '--executor', 'postgres', '--db', target.location],
        { cwd: dir },
      );
      expect(run.code, run.stdout).toBe(2);
      expect(run.stderr).toContain('--executor postgres queues tasks for `saffron worker`');
      expect(run.stderr).toContain('is not PostgreSQL — use --executor inline or threads');
    }
  });
});

describe.runIf(process.env.DATABASE_URL)('saffron run --executor postgres on PostgreSQL', () => {
  it('waits for a worker to run the task, hinting when none claims it', async () => {
    const target = await newTarget('postgres', dir);
    try {
      // postgres is the default executor on PostgreSQL
      const run = startCli(
        ['run', fixtures.queued, '--data', '{"n": 6}', '--db', target.location, '--json'],
        dir,
      );
      let ended = false;
      void run.done.then(() => (ended = true));
      await until(() => run.stderr().includes('no worker has claimed'), 'the hint', 15_000);
      expect(ended).toBe(false);
      expect(run.stderr()).toMatch(
        /no worker has claimed the 1 task\(s\) of workflow [0-9a-f-]{36} \(step score\) for 3 s; start `saffron worker --db '[^']+search_path[^']+'`/,
      );
      await target.inspect(async (store) => {
        expect(await statusCounts(store)).toEqual({ PENDING_ASYNC: 1 });
        const errors: unknown[] = [];
        const worker = workerRuntime(store, fixtures.dir, errors);
        const service = worker.serve({ pollMs: 100, maintenance: false });
        try {
          const result = await run.done;
          expect(result.code, result.stderr).toBe(0);
          const wf = workflowOf(result);
          expect(wf).toMatchObject({ status: 'COMPLETED', state: { score: 12, finished: true } });
          const owner = await store.db
            .selectFrom('tasks')
            .select(['worker_id', 'status'])
            .where('workflow_id', '=', wf.id)
            .executeTakeFirstOrThrow();
          expect(owner).toEqual({ worker_id: 'test-worker', status: 'COMPLETED' });
        } finally {
          await service.stop();
          await worker.close();
        }
        expect(errors).toEqual([]);
      });
    } finally {
      await target.drop();
    }
  });

  it('drives a workflow that waits for `next` after the worker finished its task', async () => {
    const target = await newTarget('postgres', dir);
    try {
      // migrate first so the worker can poll while `run` starts
      expect((await runCli(['db', 'init', '--db', target.location], { cwd: dir })).code).toBe(0);
      await target.inspect(async (store) => {
        const errors: unknown[] = [];
        const worker = workerRuntime(store, fixtures.dir, errors);
        const service = worker.serve({ pollMs: 100, maintenance: false });
        try {
          const result = await runCli(
            [
              'run',
              fixtures.manual,
              '--executor',
              'postgres',
              '--data',
              '{"n": 7}',
              '--db',
              target.location,
              '--json',
            ],
            { cwd: dir },
          );
          expect(result.code, result.stderr).toBe(0);
          expect(result.stderr).not.toContain('no worker has claimed');
          const wf = workflowOf(result);
          expect(wf).toMatchObject({ status: 'COMPLETED', state: { score: 14, finished: true } });
          const audit = await worker.audit(wf.id);
          expect(
            audit.filter((e) => e.eventType === 'STEP_EXECUTED').map((e) => e.stepName),
          ).toEqual(['prepare', 'score', 'finish']);
          const [task] = await listTasks(store, wf.id);
          expect(task?.status).toBe('COMPLETED');
          const owner = await store.db
            .selectFrom('tasks')
            .select('worker_id')
            .where('workflow_id', '=', wf.id)
            .executeTakeFirstOrThrow();
          expect(owner.worker_id).toBe('test-worker');
        } finally {
          await service.stop();
          await worker.close();
        }
        expect(errors).toEqual([]);
      });
    } finally {
      await target.drop();
    }
  });
});
