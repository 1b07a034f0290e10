/**
 * `saffron worker` as real processes: workers on one store run the ASYNC and PARALLEL tasks
 * an engine queues; on PostgreSQL three workers share the queue, every task body runs at
 * least once and every result is applied exactly once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../actors/index.js';
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

for (const dialect of DIALECTS.filter((d) => d.name !== 'pglite')) {
  describe(`saffron worker on ${dialect.name}`, () => {
    it(
      dialect.name === 'postgres'
        ? 'completes every workflow with three workers sharing the queue, applying each result once'
        : 'runs the tasks an engine queues and stops cleanly on SIGTERM',
      async () => {
        const handle = await openWithSchema(dialect);
        const dir = mkdtempSync(join(tmpdir(), 'saffron-workers-'));
        const journal = join(dir, 'journal.log');
        const location = locationOf(handle, dialect.name);
        const count = dialect.name === 'postgres' ? 90 : 20;
        const workers =
          dialect.name === 'postgres'
            ? [0, 1, 2].map(() =>
                startWorker(location, ['--lease-ms', '1500', '--concurrency', '4']),
              )
            : [startWorker(location)];
        const exits = workers.map(exited);
        const engine: Runtime = createRuntime({
          store: handle.store,
          stepsRoot: ENGINE_STEPS,
          runTasks: false,
        });
        const progress = async () => {
          const byStatus = await handle.store.db
            .selectFrom('workflow_executions')
            .select(['status', (eb) => eb.fn.countAll().as('n')])
            .groupBy('status')
            .execute();
          const tasks = await handle.store.db
            .selectFrom('tasks')
            .select(['status', (eb) => eb.fn.countAll().as('n')])
            .groupBy('status')
            .execute();
          const stuck = await handle.store.db
            .selectFrom('workflow_executions')
            .select(['id', 'current_step', 'version'])
            .where('status', '=', 'ACTIVE')
            .limit(2)
            .execute();
          const beats = await handle.store.db
            .selectFrom('workflow_heartbeats')
            .selectAll()
            .execute();
          const trail = stuck[0]
            ? (await engine.audit(stuck[0].id)).map(
                (e) => `${e.eventType}:${e.stepName}:${JSON.stringify(e.eventData).slice(0, 80)}`,
              )
            : [];
          return JSON.stringify({
            workflows: byStatus,
            tasks,
            stuck,
            beats: beats.length,
            beat0: beats[0],
            trail,
          });
        };
        try {
          const def = await definition(FLOW);
          const ids: string[] = [];
          for (let i = 0; i < count; i++) ids.push((await engine.start(def, { journal })).id);
          await until(
            async () => (await engine.list({ status: 'COMPLETED', limit: 1000 })).length === count,
            90_000,
            progress,
          );
          for (const id of ids) {
            const wf = await engine.get(id);
            expect(wf.state).toMatchObject({
              done_score: true,
              done_left: true,
              done_right: true,
              visited: ['prepare', 'finish'],
            });
            const trail = (await engine.audit(id)).map((e) => e.eventType);
            expect(trail.filter((e) => e === 'TASK_COMPLETED')).toHaveLength(3);
            expect(trail.filter((e) => e === 'WORKFLOW_COMPLETED')).toHaveLength(1);
          }
          const lines = readFileSync(journal, 'utf8').trim().split('\n');
          const executed = new Set(lines);
          expect(executed.size).toBe(count * 3); // every task body ran at least once
          for (const w of workers) w.kill('SIGTERM');
          const results = await Promise.all(exits);
          for (const r of results) {
            expect(r.code).toBe(0);
            expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toMatchObject({
              stopped: true,
            });
          }
          if (dialect.name === 'postgres') {
            const nodes = await handle.store.db
              .selectFrom('workflow_executions')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirst();
            expect(Number(nodes?.n)).toBe(count);
          }
        } finally {
          for (const w of workers)
            if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
          await engine.close();
          await handle.close();
          rmSync(dir, { recursive: true, force: true });
        }
      },
      120_000,
    );
  });
}
