/**
 * `saffron worker` as real processes: workers on one store run the ASYNC and PARALLEL tasks
 * an engine queues. On PostgreSQL three workers share the queue of 2,000 workflows
 * (SAFFRON_WORKER_TEST_WORKFLOWS to change it), two of them claiming tasks ahead
 * (`--prefetch`), and one of those is SIGKILLed mid-run: every workflow still completes,
 * every task body runs at least once (a journal file), and every task result is applied
 * exactly once (counted in the audit table, which each application writes in its own
 * transaction).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../actors/index.js';
import { runCli } from '../support/cli.js';
import { definition, ENGINE_STEPS } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const launcher = fileURLToPath(new URL('../../bin/saffron.js', import.meta.url));

const FLOW = `
workflow_type: queued
automate_next: true
steps:
  - { name: prepare, type: STANDARD, function: steps.mark }
  - { name: score, type: ASYNC, function: steps.journaled_task }
  - name: fan
    type: PARALLEL
    tasks:
      - { name: left, function_path: steps.journaled_task }
      - { name: right, function_path: steps.journaled_task }
  - { name: finish, type: STANDARD, function: steps.mark }
`;

function startWorker(location: string, extra: string[] = []): ChildProcess {
  return spawn(
    process.execPath,
    [launcher, 'worker', '--db', location, '--steps', ENGINE_STEPS, '--poll-ms', '100', ...extra],
    {
      stdio: ['ignore', 'pipe', openSync(join(tmpdir(), `saffron-worker-${process.pid}.log`), 'a')],
    },
  );
}

async function until(
  check: () => Promise<boolean>,
  timeoutMs: number,
  describe: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${await describe()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; stdout: string }>((resolve) => {
    let stdout = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout }));
  });

function locationOf(handle: TestStore, dialect: string): string {
  if (dialect === 'sqlite') return handle.location;
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set('options', `-c search_path=${handle.location}`);
  return url.toString();
}

const WORKFLOWS = Number(process.env.SAFFRON_WORKER_TEST_WORKFLOWS ?? 2000);

/** Workflows per status, tasks per status, and the first stuck workflow's trail. */
async function progress(handle: TestStore, engine: Runtime): Promise<string> {
  const db = handle.store.db;
  const workflows = await db
    .selectFrom('workflow_executions')
    .select(['status', (eb) => eb.fn.countAll().as('n')])
    .groupBy('status')
    .execute();
  const tasks = await db
    .selectFrom('tasks')
    .select(['status', (eb) => eb.fn.countAll().as('n')])
    .groupBy('status')
    .execute();
  const stuck = await db
    .selectFrom('workflow_executions')
    .select(['id', 'status', 'current_step', 'version'])
    .where('status', 'not in', ['COMPLETED'])
    .limit(1)
    .executeTakeFirst();
  const beat = stuck
    ? await db
        .selectFrom('workflow_heartbeats')
        .selectAll()
        .where('workflow_id', '=', stuck.id)
        .executeTakeFirst()
    : undefined;
  const trail = stuck
    ? (await engine.audit(stuck.id)).map((e) => `${e.eventType}:${e.stepName ?? ''}`)
    : [];
  return JSON.stringify({ workflows, tasks, stuck, beat, trail });
}

async function completedCount(handle: TestStore): Promise<number> {
  const row = await handle.store.db
    .selectFrom('workflow_executions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('status', '=', 'COMPLETED')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Per workflow: how many times each task result and each group result was applied. */
async function applications(handle: TestStore) {
  const rows = await handle.store.db
    .selectFrom('workflow_audit_log')
    .select(['workflow_id', 'event_type', 'step_name', (eb) => eb.fn.countAll<string>().as('n')])
    .where('event_type', 'in', ['TASK_COMPLETED', 'STEP_EXECUTED', 'WORKFLOW_COMPLETED'])
    .groupBy(['workflow_id', 'event_type', 'step_name'])
    .execute();
  const byWorkflow = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const counts = byWorkflow.get(r.workflow_id) ?? {};
    counts[`${r.event_type}:${r.step_name ?? ''}`] = Number(r.n);
    byWorkflow.set(r.workflow_id, counts);
  }
  return byWorkflow;
}

const EXACTLY_ONCE = {
  'STEP_EXECUTED:prepare': 1,
  'TASK_COMPLETED:score': 1,
  'STEP_EXECUTED:score': 1,
  'TASK_COMPLETED:fan': 2,
  'STEP_EXECUTED:fan': 1,
  'STEP_EXECUTED:finish': 1,
  'WORKFLOW_COMPLETED:': 1,
};

for (const dialect of DIALECTS.filter((d) => d.name !== 'pglite')) {
  const cluster = dialect.name === 'postgres';
  describe(`saffron worker on ${dialect.name}`, () => {
    it(
      cluster
        ? `completes ${WORKFLOWS} workflows with three workers when one is SIGKILLed mid-run, applying each result once`
        : 'runs the tasks an engine queues and stops cleanly on SIGTERM',
      async () => {
        const handle = await openWithSchema(dialect);
        const dir = mkdtempSync(join(tmpdir(), 'saffron-workers-'));
        const journal = join(dir, 'journal.log');
        const location = locationOf(handle, dialect.name);
        const count = cluster ? WORKFLOWS : 20;
        // short lease and zombie threshold, so the killed worker's work moves on quickly
        const clusterFlags = [
          '--concurrency',
          '8',
          '--lease-ms',
          '3000',
          '--heartbeat-ms',
          '1000',
          '--zombie-after-ms',
          '3000',
        ];
        // the worker killed and one other claim 8 tasks ahead (--prefetch), so tasks held
        // unrun by a dead worker must move on too
        const workers = cluster
          ? [0, 1, 2].map((i) =>
              startWorker(location, i === 1 ? clusterFlags : [...clusterFlags, '--prefetch', '8']),
            )
          : [startWorker(location)];
        const exits = workers.map(exited);
        const engine: Runtime = createRuntime({
          store: handle.store,
          stepsRoot: ENGINE_STEPS,
          runTasks: false,
        });
        try {
          const def = await definition(FLOW);
          const ids: string[] = [];
          for (let i = 0; i < count; i += 50) {
            const chunk = Array.from({ length: Math.min(50, count - i) }, () =>
              engine.start(def, { journal }),
            );
            for (const wf of await Promise.all(chunk)) ids.push(wf.id);
          }
          let completedAtKill: number | undefined;
          if (cluster) {
            const victim = workers[0]!;
            await until(
              async () => (await completedCount(handle)) >= count / 4,
              120_000,
              () => progress(handle, engine),
            );
            victim.kill('SIGKILL');
            completedAtKill = await completedCount(handle);
            expect((await exits[0]!).code).toBe(null); // died by the signal, no clean exit
          }
          await until(
            async () => (await completedCount(handle)) === count,
            240_000,
            () => progress(handle, engine),
          );
          if (completedAtKill !== undefined) expect(completedAtKill).toBeLessThan(count);

          const executed = new Set(readFileSync(journal, 'utf8').trim().split('\n'));
          expect(executed.size).toBe(count * 3); // every task body ran at least once

          const applied = await applications(handle);
          expect(applied.size).toBe(count);
          for (const id of ids) expect(applied.get(id)).toEqual(EXACTLY_ONCE);
          for (const id of ids.slice(0, 50)) {
            expect((await engine.get(id)).state).toMatchObject({
              done_score: true,
              done_left: true,
              done_right: true,
              visited: ['prepare', 'finish'],
            });
          }

          const survivors = cluster ? workers.slice(1) : workers;
          for (const w of survivors) w.kill('SIGTERM');
          for (const r of await Promise.all(cluster ? exits.slice(1) : exits)) {
            expect(r.code).toBe(0);
            expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({
              stopped: true,
            });
          }
          expect(
            await handle.store.db.selectFrom('workflow_heartbeats').selectAll().execute(),
          ).toEqual([]);
        } finally {
          for (const w of workers)
            if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
          await engine.close();
          await handle.close();
          rmSync(dir, { recursive: true, force: true });
        }
      },
      400_000,
    );
  });
}

describe('saffron worker options', () => {
  it('refuses bad numbers with exit 2, before opening the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'saffron-worker-options-'));
    try {
      const db = join(dir, 'never.sqlite');
      const cases: [string[], string][] = [
        [['--concurrency', '0'], "--concurrency must be a positive integer, got '0'"],
        [['--prefetch', '-1'], "--prefetch must be a non-negative integer, got '-1'"],
        [['--prefetch', '1.5'], "--prefetch must be a non-negative integer, got '1.5'"],
        [['--prefetch', ''], "--prefetch must be a non-negative integer, got ''"],
      ];
      for (const [args, message] of cases) {
        const run = await runCli(['worker', '--db', db, ...args]);
        expect(run.code).toBe(2);
        expect(run.stderr).toBe(`saffron: ${message}\n`);
      }
      expect(existsSync(db)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
