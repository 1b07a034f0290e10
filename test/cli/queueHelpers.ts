/**
 * Shared pieces of the tests of `start`, `--executor` and `schedules`: a folder of workflows
 * and step modules, a fresh database per test on every engine dialect (a SQLite file, a
 * PGlite folder, a PostgreSQL schema when DATABASE_URL is set), a way to inspect it between
 * CLI runs, and a worker that runs its queued tasks the way `saffron worker` does.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../actors/index.js';
import { main } from '../../bin/cli.js';
import { openStore, type Store, type StoreDialect } from '../../runtime/store/index.js';
import type { CliRun } from '../support/cli.js';
import { adminQuery } from '../support/stores.js';

/** The step modules of the fixture workflows (`threadId` tells where a step ran). */
const STEPS = `
import { threadId } from 'node:worker_threads';
export const prepare = (state) => ({ prepared: true, prepare_thread: threadId });
export const score = (state) => ({ score: (state.n ?? 1) * 2, score_thread: threadId });
export const finish = () => ({ finished: true });
export const explode = () => { throw new Error('card reader on fire'); };
`;

const QUEUED = (type: string, automateNext: boolean) => `
workflow_type: ${type}
automate_next: ${automateNext}
steps:
  - { name: prepare, type: STANDARD, function: steps.prepare }
  - { name: score, type: ASYNC, function: steps.score }
  - { name: finish, type: STANDARD, function: steps.finish }
`;

/** Workflow files written by {@link writeFixtures}. */
export interface Fixtures {
  dir: string;
  /** prepare (STANDARD) → score (ASYNC task) → finish, automate_next. */
  queued: string;
  /** The same without automate_next: every step waits for `next`. */
  manual: string;
  /** One STANDARD step. */
  quick: string;
  /** A first step that throws. */
  failing: string;
  /** A CRON_SCHEDULE step registering `settle-{{ state.terminal }}` every 5 minutes for `nightly`. */
  cron: string;
}

/** Write the fixture workflows and their steps module into `dir`. */
export function writeFixtures(dir: string): Fixtures {
  mkdirSync(dir, { recursive: true });
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  file('steps.js', STEPS);
  file(
    'nightly.yaml',
    `
workflow_type: nightly
steps:
  - { name: settle, type: STANDARD, function: steps.finish }
`,
  );
  return {
    dir,
    queued: file('queued.yaml', QUEUED('queued', true)),
    manual: file('manual.yaml', QUEUED('manual', false)),
    quick: file(
      'quick.yaml',
      `
workflow_type: quick
steps:
  - { name: prepare, type: STANDARD, function: steps.prepare }
`,
    ),
    failing: file(
      'failing.yaml',
      `
workflow_type: failing
steps:
  - { name: boom, type: STANDARD, function: steps.explode }
`,
    ),
    cron: file(
      'cron.yaml',
      `
workflow_type: cron_registration
steps:
  - name: register
    type: CRON_SCHEDULE
    schedule_name: "settle-{{ state.terminal }}"
    cron_expression: "*/5 * * * *"
    target_workflow_type: nightly
    initial_data_template: { terminal: "{{ state.terminal }}" }
`,
    ),
  };
}

/** A fresh database for one test, named the way `--db` takes it. */
export interface CliTarget {
  name: StoreDialect;
  location: string;
  /** Open it to look inside; close before the next CLI run (a PGlite folder has one user). */
  inspect<T>(fn: (store: Store) => Promise<T>): Promise<T>;
  /** Drop it (PostgreSQL schemas; files go with the test's folder). */
  drop(): Promise<void>;
}

let counter = 0;
const databaseUrl = process.env.DATABASE_URL;

/** The dialects a CLI test runs on: SQLite and PGlite always, PostgreSQL with DATABASE_URL. */
export const TARGET_DIALECTS: readonly StoreDialect[] = databaseUrl
  ? ['sqlite', 'pglite', 'postgres']
  : ['sqlite', 'pglite'];

/** A fresh database of `dialect` under `dir` (or a new schema of DATABASE_URL). */
export async function newTarget(dialect: StoreDialect, dir: string): Promise<CliTarget> {
  const n = counter++;
  let location: string;
  let drop = () => Promise.resolve();
  switch (dialect) {
    case 'sqlite':
      location = join(dir, `engine-${n}.db`);
      break;
    case 'pglite':
      location = `pglite:${join(dir, `pglite-${n}`)}`;
      break;
    case 'postgres': {
      const schema = `saffron_cli_queue_${process.pid}_${n}`;
      await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
      const url = new URL(databaseUrl!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      location = url.toString();
      drop = () => adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      break;
    }
  }
  return {
    name: dialect,
    location,
    async inspect(fn) {
      const store = await openStore(location);
      try {
        return await fn(store);
      } finally {
        await store.close();
      }
    },
    drop,
  };
}

/** A runtime over `store` as a `saffron worker` runs it: its own worker id, tasks run here. */
export function workerRuntime(
  store: Store,
  stepsRoot: string,
  errors: unknown[],
  options: Partial<RuntimeOptions> = {},
): Runtime {
  return createRuntime({
    store,
    stepsRoot,
    workerId: 'test-worker',
    onBackgroundError: (error) => void errors.push(error),
    ...options,
  });
}

/** Run every queued task in `store` (and what the workflows do next) as a worker would. */
export async function runQueuedTasks(store: Store, stepsRoot: string): Promise<number> {
  const errors: unknown[] = [];
  const worker = workerRuntime(store, stepsRoot, errors);
  let ran: number;
  try {
    ran = await worker.work();
    await worker.drain();
  } finally {
    await worker.close();
  }
  if (errors.length > 0) throw errors[0];
  return ran;
}

/** A CLI run in flight: what it printed so far, and its outcome when it ends. */
export interface CliInFlight {
  stderr(): string;
  done: Promise<CliRun>;
}

/** Start `saffron …args` in-process without waiting for it. */
export function startCli(args: string[], cwd: string): CliInFlight {
  let stdout = '';
  let stderr = '';
  const done = main(args, {
    stdout: { write: (t) => void (stdout += t) },
    stderr: { write: (t) => void (stderr += t) },
    env: {},
    cwd,
  }).then((code) => ({ code, stdout, stderr }));
  return { stderr: () => stderr, done };
}

/** Wait until `check` holds (polling), or fail with `what`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Workflows of a type by status, from the database. */
export async function statusCounts(store: Store, type?: string): Promise<Record<string, number>> {
  let query = store.db
    .selectFrom('workflow_executions')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .groupBy('status');
  if (type) query = query.where('workflow_type', '=', type);
  const rows = await query.execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
