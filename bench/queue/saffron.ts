/**
 * Saffron under test, two ways over the same worker loop (`runtime.serve`, what `saffron
 * worker --no-maintenance` runs):
 *
 * - `saffron`: the real thing. Each task is the one task of a workflow whose only step is
 *   ASYNC, started through the public runtime (`runTasks: false`), so the enqueue is the
 *   step's dispatch commit and a completion also commits the workflow's transition to
 *   COMPLETED (audit rows, state merge) — work the peers do not do.
 * - `saffron_queue_only`: the same worker loop over tasks queued with the store's own
 *   `insertTasks` + `notifyTasks` (what a dispatch commit writes) for workflows that are not
 *   waiting for them; each completion still locks the group, records the task and its audit
 *   row and reads the workflow, but commits no transition. It shows what the workflow
 *   transition costs on top of the queue.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createRuntime, type Runtime, type Service } from '../../actors/index.js';
import { migrations } from '../../migrations/index.js';
import {
  inlineExecutor,
  insertTasks,
  loadDefinition,
  migrate,
  notifyTasks,
  openStore,
  type NewTask,
  type Store,
  type WorkflowDefinition,
} from '../../runtime/index.js';
import {
  inParallel,
  wallClock,
  type Enqueued,
  type QueueConfig,
  type QueueHandle,
  type QueueSystem,
} from './system.js';

const STEP = 'work';
const WORKFLOW = `workflow_type: bench_queue
steps:
  - { name: ${STEP}, type: ASYNC, function: bench.touch }
`;
/** The step module the workers load (written under the steps root by the benchmark). */
export const STEP_MODULE = {
  file: 'bench.js',
  source: 'export const touch = () => ({ done: true });\n',
};
/** Idle workers wake on NOTIFY; this is only the fallback poll (`--poll-ms`, CLI default). */
const POLL_MS = 1000;
/** Enqueuers start this many workflows at once while filling a backlog. */
const FILL_PARALLEL = 32;
/** Tasks per insert statement when queueing directly (PostgreSQL caps parameters per statement). */
const INSERT_CHUNK = 500;

async function openMigrated(config: QueueConfig, connections: number): Promise<Store> {
  const store = await openStore(config.url, {
    postgres: { schema: config.schema, maxConnections: connections },
  });
  const failed = (await migrate(store, migrations)).find((r) => r.status === 'failed');
  if (failed) {
    await store.close();
    throw failed.error ?? new Error(`migration ${failed.id} failed`);
  }
  return store;
}

/** Tasks in `status`, one count per status so each one reads its own partial index. */
async function countTasks(store: Store, statuses: readonly string[]): Promise<number> {
  let total = 0;
  for (const status of statuses) {
    const row = await store.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', status)
      .executeTakeFirstOrThrow();
    total += Number(row.n);
  }
  return total;
}

/** A task shaped as an ASYNC step's dispatch writes it (see actors/runtime/drive.ts). */
const asyncTask = (workflowId: string): NewTask => ({
  id: randomUUID(),
  workflowId,
  stepName: STEP,
  functionPath: 'bench.touch',
  state: {},
  context: {
    taskName: STEP,
    workflowType: 'bench_queue',
    idempotencyKey: `${STEP}:1:${STEP}`,
  },
  parallelGroup: `${STEP}:1`,
  taskIndex: 0,
  maxAttempts: 3,
});

/**
 * Every workflow of the run COMPLETED with its STEP_EXECUTED and WORKFLOW_COMPLETED audit rows
 * (a drained `saffron` backlog, and the floor's, which writes the same rows by hand).
 */
async function expectWorkflowsCompleted(store: Store): Promise<void> {
  const { rows } = await sql<{ workflows: number; completed: number; events: number }>`
    SELECT (SELECT count(*) FROM workflow_executions)::int AS workflows,
      (SELECT count(*) FROM workflow_executions WHERE status = 'COMPLETED')::int AS completed,
      (SELECT count(*) FROM workflow_audit_log
        WHERE event_type IN ('STEP_EXECUTED', 'WORKFLOW_COMPLETED'))::int AS events`.execute(
    store.db,
  );
  const { workflows, completed, events } = rows[0]!;
  if (completed !== workflows || events !== 2 * workflows)
    throw new Error(
      `of ${workflows} workflow(s), ${completed} COMPLETED with ${events} STEP_EXECUTED and WORKFLOW_COMPLETED audit row(s) (expected ${workflows} and ${2 * workflows})`,
    );
}

/** Queue tasks for `workflowIds` in one transaction per chunk, with the wake-up NOTIFY. */
async function queueTasks(store: Store, workflowIds: readonly string[]): Promise<void> {
  for (let i = 0; i < workflowIds.length; i += INSERT_CHUNK) {
    await store.transaction(async (tx) => {
      await insertTasks(tx, workflowIds.slice(i, i + INSERT_CHUNK).map(asyncTask));
      await notifyTasks(tx);
    });
  }
}

function handle(
  store: Store,
  runtime: Runtime,
  enqueue: () => Promise<Enqueued>,
  fill: (count: number) => Promise<void>,
  verify?: () => Promise<void>,
): QueueHandle {
  return {
    fill,
    enqueue,
    ...(verify ? { verify } : {}),
    unfinished: () => countTasks(store, ['PENDING', 'CLAIMED']),
    failed: () => countTasks(store, ['FAILED']),
    async close() {
      await runtime.close();
      await store.close();
    },
  };
}

async function definitionFor(config: QueueConfig): Promise<WorkflowDefinition> {
  return (await loadDefinition(WORKFLOW, { stepsRoot: config.stepsRoot })).definition;
}

const describeSaffron = (concurrency: number, prefetch = 0) =>
  `runtime.serve per process (saffron worker): batch ${concurrency}${prefetch ? `, prefetch ${prefetch}` : ''}, LISTEN/NOTIFY wake-ups (fallback poll ${POLL_MS} ms), no maintenance passes, pool ${concurrency * 2 + 4}`;

/**
 * The worker side every variant shares: the real serve loop, its executor wrapped to report
 * body starts, claiming `prefetch` tasks ahead (`saffron worker --prefetch`).
 */
async function saffronWorker(
  config: QueueConfig,
  onStart: (key: string) => void,
  onError: (error: unknown) => void,
  prefetch = 0,
) {
  const store = await openStore(config.url, {
    postgres: { schema: config.schema, maxConnections: config.concurrency * 2 + 4 },
  });
  const inline = inlineExecutor({ stepsRoot: config.stepsRoot });
  const runtime = createRuntime({
    store,
    executor: {
      call(functionPath, state, context) {
        onStart(context.workflowId);
        return inline.call(functionPath, state, context);
      },
      close: () => inline.close(),
    },
    onBackgroundError: onError,
  });
  let service: Service | undefined;
  return {
    go() {
      service = runtime.serve({
        batch: config.concurrency,
        prefetch,
        pollMs: POLL_MS,
        maintenance: false,
      });
      return Promise.resolve();
    },
    async stop() {
      await service?.stop();
      await runtime.close();
      await store.close();
    },
  };
}

/** Saffron with workflows: a task's completion also completes its workflow. */
export const saffron: QueueSystem = {
  name: 'saffron',
  describe: (c) =>
    `${describeSaffron(c)}; each task is a one-ASYNC-step workflow started with runtime.start (runTasks: false), its completion commits the workflow's transition`,
  async open(config) {
    const store = await openMigrated(config, 16);
    const committed = new Map<string, number>();
    const runtime = createRuntime({
      store,
      stepsRoot: config.stepsRoot,
      runTasks: false,
      // the dispatch commit of the ASYNC step is the enqueue
      faults: (point, at) => {
        if (point === 'after-commit' && at.stepName === STEP)
          committed.set(at.workflowId, wallClock());
      },
    });
    const definition = await definitionFor(config);
    const start = () => runtime.start(definition, {});
    return handle(
      store,
      runtime,
      async () => {
        const { id } = await start();
        const committedAt = committed.get(id)!;
        committed.delete(id);
        return { key: id, committedAt };
      },
      async (count) => {
        await inParallel(count, FILL_PARALLEL, async () => committed.delete((await start()).id));
      },
      () => expectWorkflowsCompleted(store),
    );
  },
  worker: saffronWorker,
};

/**
 * Saffron with the same workflows, its worker claiming `concurrency` tasks ahead of the
 * running ones (`saffron worker --prefetch`): the counterpart of graphile-worker's local queue.
 */
export const saffronPrefetch: QueueSystem = {
  ...saffron,
  name: 'saffron_prefetch',
  describe: (c) =>
    `${describeSaffron(c, c)}; the same workflows as saffron, ${c} tasks claimed ahead of the running ones`,
  worker: (config, onStart, onError) => saffronWorker(config, onStart, onError, config.concurrency),
};

/** Saffron's task queue alone: tasks queued by the store for workflows not waiting for them. */
export const saffronQueueOnly: QueueSystem = {
  name: 'saffron_queue_only',
  describe: (c) =>
    `${describeSaffron(c)}; tasks queued with insertTasks + notifyTasks for workflows created with run: false, so completions record the task but commit no workflow transition`,
  async open(config) {
    const store = await openMigrated(config, 16);
    const runtime = createRuntime({ store, stepsRoot: config.stepsRoot, runTasks: false });
    const definition = await definitionFor(config);
    const create = async () => (await runtime.start(definition, {}, { run: false })).id;
    return handle(
      store,
      runtime,
      async () => {
        const id = await create();
        await queueTasks(store, [id]);
        return { key: id, committedAt: wallClock() };
      },
      async (count) => {
        const ids: string[] = [];
        await inParallel(count, FILL_PARALLEL, async () => ids.push(await create()));
        await queueTasks(store, ids);
      },
    );
  },
  worker: saffronWorker,
};
