/**
 * `saffron start`: creates workflows, runs each until it first waits, and returns without
 * running task bodies — those stay queued until a worker runs them. One from `--data`, or one
 * per line of a `.jsonl` file, created in one transaction; a bad line starts nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listTasks, type Store } from '../../runtime/store/index.js';
import { runCli } from '../support/cli.js';
import { createSchema } from '../support/stores.js';
import {
  newTarget,
  runQueuedTasks,
  statusCounts,
  TARGET_DIALECTS,
  writeFixtures,
} from './queueHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-start-'));
const fixtures = writeFixtures(join(dir, 'flows'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  id: string;
  status: string;
  current_step: string | null;
}

function startedOf(run: { code: number; stdout: string; stderr: string }): Started[] {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Started[];
}

const heartbeats = async (store: Store) =>
  (await store.db.selectFrom('workflow_heartbeats').select('workflow_id').execute()).length;

for (const dialect of TARGET_DIALECTS) {
  describe(`saffron start on ${dialect}`, { timeout: 120_000 }, () => {
    it('returns while the workflow waits on its task; a worker finishes it', async () => {
      const target = await newTarget(dialect, dir);
      try {
        const executor = dialect === 'postgres' ? ['--executor', 'postgres'] : [];
        const run = await runCli(
          [
            'start',
            fixtures.queued,
            '--data',
            '{"n": 21}',
            '--db',
            target.location,
            '--json',
            ...executor,
          ],
          { cwd: dir },
        );
        const [started, ...more] = startedOf(run);
        expect(more).toEqual([]);
        expect(started).toMatchObject({ status: 'PENDING_ASYNC', current_step: 'score' });

        await target.inspect(async (store) => {
          const wf = await store.db
            .selectFrom('workflow_executions')
            .select(['status', 'state'])
            .where('id', '=', started!.id)
            .executeTakeFirstOrThrow();
          expect(wf.status).toBe('PENDING_ASYNC');
          // the first step ran in `start`; the task did not
          const state = store.codec.parseJson(wf.state) as Record<string, unknown>;
          expect(state).toMatchObject({ n: 21, prepared: true });
          expect(state.score).toBeUndefined();
          const tasks = await listTasks(store, started!.id);
          expect(tasks.map((t) => [t.stepName, t.status, t.attempts])).toEqual([
            ['score', 'PENDING', 0],
          ]);
          expect(await heartbeats(store)).toBe(0);

          // a worker (as `saffron worker` runs it) takes it from here
          expect(await runQueuedTasks(store, fixtures.dir)).toBe(1);
          const done = await store.db
            .selectFrom('workflow_executions')
            .select(['status', 'state'])
            .where('id', '=', started!.id)
            .executeTakeFirstOrThrow();
          expect(done.status).toBe('COMPLETED');
          expect(store.codec.parseJson(done.state)).toMatchObject({ score: 42, finished: true });
          const [task] = await listTasks(store, started!.id);
          expect(task).toMatchObject({ status: 'COMPLETED' });
          const owner = await store.db
            .selectFrom('tasks')
            .select('worker_id')
            .where('workflow_id', '=', started!.id)
            .executeTakeFirstOrThrow();
          expect(owner.worker_id).toBe('test-worker');
        });
      } finally {
        await target.drop();
      }
    });

    it('starts one workflow per line of a .jsonl file in one batch', async () => {
      const target = await newTarget(dialect, dir);
      try {
        const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ n: i, line: i + 1 }));
        // blank lines (and a trailing newline) are not workflows
        const file = join(dir, `batch-${dialect}.jsonl`);
        writeFileSync(file, `${lines.slice(0, 25).join('\n')}\n\n${lines.slice(25).join('\n')}\n`);
        const run = await runCli(
          ['start', fixtures.queued, '--data-file', file, '--db', target.location, '--json'],
          { cwd: dir },
        );
        const started = startedOf(run);
        expect(started).toHaveLength(50);
        expect(new Set(started.map((s) => s.id)).size).toBe(50);
        expect(new Set(started.map((s) => s.status))).toEqual(new Set(['PENDING_ASYNC']));
        expect(run.stderr).not.toMatch(/started \d+\//); // small batches print no progress

        await target.inspect(async (store) => {
          expect(await statusCounts(store, 'queued')).toEqual({ PENDING_ASYNC: 50 });
          const rows = await store.db
            .selectFrom('workflow_executions')
            .select(['id', 'state'])
            .execute();
          const lineOf = new Map(
            rows.map((r) => [r.id, (store.codec.parseJson(r.state) as { line: number }).line]),
          );
          // printed in file order
          expect(started.map((s) => lineOf.get(s.id))).toEqual(lines.map((_, i) => i + 1));
          const pending = await store.db
            .selectFrom('tasks')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('status', '=', 'PENDING')
            .executeTakeFirstOrThrow();
          expect(Number(pending.n)).toBe(50);

          expect(await runQueuedTasks(store, fixtures.dir)).toBe(50);
          expect(await statusCounts(store, 'queued')).toEqual({ COMPLETED: 50 });
          const done = await store.db.selectFrom('workflow_executions').select('state').execute();
          for (const r of done) {
            const state = store.codec.parseJson(r.state) as { n: number; score: number };
            expect(state.score).toBe(state.n * 2);
          }
        });
      } finally {
        await target.drop();
      }
    });
  });
}

describe('saffron start: input and failures', () => {
  it('rejects a .jsonl file with bad lines, naming them, and starts nothing', async () => {
    const target = await newTarget('sqlite', dir);
    await target.inspect(createSchema);
    const file = join(dir, 'bad.jsonl');
    writeFileSync(
      file,
      ['{"n": 1}', '{"n": 2}', '{"n": 3', '', '[4]', '{"n": 6}', '"seven"'].join('\n'),
    );
    const run = await runCli(
      ['start', fixtures.queued, '--data-file', 'bad.jsonl', '--db', target.location],
      { cwd: dir },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('data file bad.jsonl has 3 bad line(s); nothing was started');
    expect(run.stderr).toMatch(/bad\.jsonl:3: not valid JSON/);
    expect(run.stderr).toContain('bad.jsonl:5: must be a JSON object, got an array');
    expect(run.stderr).toContain('bad.jsonl:7: must be a JSON object, got a string');
    expect(run.stderr).not.toMatch(/bad\.jsonl:[1246]:/);
    await target.inspect(async (store) => {
      expect(await statusCounts(store)).toEqual({});
    });
  });

  it('prints one line per workflow, and progress on stderr for large files', async () => {
    const target = await newTarget('sqlite', dir);
    const total = 2500;
    const file = join(dir, 'large.jsonl');
    writeFileSync(
      file,
      Array.from({ length: total }, (_, i) => JSON.stringify({ n: i })).join('\n'),
    );
    const run = await runCli(
      ['start', fixtures.quick, '--data-file', file, '--db', target.location],
      { cwd: dir },
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(total);
    for (const line of lines) expect(line).toMatch(/^[0-9a-f-]{36} COMPLETED$/);
    expect(run.stderr).toContain(`created ${total} workflow(s) of quick`);
    expect(run.stderr).toContain(`started 1000/${total}`);
    expect(run.stderr).toContain(`started 2000/${total}`);
    expect(run.stderr).toContain(`started ${total}/${total}`);
    await target.inspect(async (store) => {
      expect(await statusCounts(store, 'quick')).toEqual({ COMPLETED: total });
    });
  });

  it('exits 1 when a workflow fails in its first step, still printing it', async () => {
    const target = await newTarget('sqlite', dir);
    const run = await runCli(['start', fixtures.failing, '--db', target.location], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^[0-9a-f-]{36} FAILED\n$/);
    expect(run.stderr).toMatch(
      /workflow [0-9a-f-]{36} ended FAILED at boom: .*card reader on fire/,
    );
    await target.inspect(async (store) => {
      expect(await statusCounts(store, 'failing')).toEqual({ FAILED: 1 });
    });
  });

  it('refuses an unknown executor and the postgres executor on SQLite, starting nothing', async () => {
    const target = await newTarget('sqlite', dir);
    await target.inspect(createSchema);
    const bogus = await runCli(
      ['start', fixtures.queued, '--executor', 'celery', '--db', target.location],
      { cwd: dir },
    );
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain(
      "argument 'celery' is invalid. Allowed choices are inline, threads, postgres.",
    );
    const postgres = await runCli(
      ['start', fixtures.queued, '--executor', 'postgres', '--db', target.location],
      { cwd: dir },
    );
    expect(postgres.code).toBe(2);
    expect(postgres.stderr).toContain(
      `--executor postgres queues tasks for \`saffron worker\` processes sharing a PostgreSQL database`,
    );
    expect(postgres.stderr).toContain(`sqlite:${target.location} is not PostgreSQL`);
    await target.inspect(async (store) => {
      expect(await statusCounts(store)).toEqual({});
    });
  });
});
