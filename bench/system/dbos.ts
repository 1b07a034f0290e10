/**
 * DBOS Transact (`@dbos-inc/dbos-sdk`) running the benchmark's workflow — the baseline of the
 * end-to-end measurement, on the same PostgreSQL (a system-database schema of its own).
 *
 * The equivalent of Saffron's five steps with one ASYNC step: a registered workflow that runs
 * `validate` and `enrich` as `DBOS.runStep` checkpoints, enqueues `score` as a child workflow
 * on a DBOS queue (DBOS's durable unit of background work: a row in `workflow_status` that a
 * process listening on the queue dequeues and runs) and waits for its result with
 * `handle.getResult`, then runs `decide` and `record` as steps. The child's body is the step
 * function itself (its output is the child workflow's checkpointed result), so DBOS does one
 * write fewer per workflow than a child with an inner step would.
 *
 * Topology, as for Saffron: the engine process starts the workflows and runs the parent
 * workflows (DBOS runs a workflow in the process that starts it); it listens to no queue
 * (`listenQueues: []`), so every `score` runs in the worker processes, which listen only to
 * the task queue. DBOS has no wake-up for a queue or a result in another process: the queue's
 * dispatcher polls (`minPollingIntervalMs`, adaptive upwards on contention) and `getResult`
 * polls (`pollingIntervalMs`); both intervals are benchmark settings, documented in the notes.
 */
import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DBOS, type DLogger } from '@dbos-inc/dbos-sdk';
import { FLOW_TYPE, importSteps, type FlowState } from './flow.js';

/** Where and how a DBOS process of the benchmark runs. */
export interface DbosConfig {
  url: string;
  /** The system-database schema this measurement owns. */
  schema: string;
  stepsRoot: string;
  /** `workerConcurrency` of the task queue: children run at once per worker process. */
  concurrency: number;
  /** The task queue's `minPollingIntervalMs`. */
  queuePollMs: number;
  /** `getResult`'s `pollingIntervalMs` in the parent workflow. */
  resultPollMs: number;
  /** `systemDatabasePoolSize` of each process. */
  poolSize: number;
}

/** The name of the queue `score` children go to. */
const TASK_QUEUE = 'bench_system_tasks';

/** DBOS's own log lines go to stderr (warnings and errors only), never into the JSON on stdout. */
const stderrLogger: DLogger = {
  info: () => undefined,
  debug: () => undefined,
  warn: (entry) => void process.stderr.write(`dbos: ${String(entry)}\n`),
  error: (entry) =>
    void process.stderr.write(
      `dbos: ${entry instanceof Error ? (entry.stack ?? entry.message) : String(entry)}\n`,
    ),
};

/** A launched DBOS process of the benchmark. */
export interface DbosProcess {
  /** Start workflow `id` with `input` (returns once DBOS has recorded it; it runs in the background). */
  start(id: string, input: FlowState): Promise<void>;
  close(): Promise<void>;
}

/**
 * Configure, register and launch DBOS in this process as the `engine` (starts and runs the
 * parent workflows, runs no queued child) or a `worker` (runs queued children only).
 */
export async function launchDbos(
  config: DbosConfig,
  role: 'engine' | 'worker',
  executorId: string,
): Promise<DbosProcess> {
  const steps = await importSteps(config.stepsRoot);
  DBOS.setConfig({
    name: 'saffron_bench_system',
    systemDatabaseUrl: config.url,
    systemDatabaseSchemaName: config.schema,
    systemDatabasePoolSize: config.poolSize,
    logger: stderrLogger,
    executorID: executorId,
    // every process registers the same functions; a fixed version keeps them one application
    applicationVersion: 'bench',
    listenQueues: role === 'engine' ? [] : [TASK_QUEUE],
  });
  const score = DBOS.registerWorkflow((state: FlowState) => Promise.resolve(steps.score(state)), {
    name: `${FLOW_TYPE}_score`,
  });
  const step = (name: keyof typeof steps, state: FlowState) =>
    DBOS.runStep(() => Promise.resolve(steps[name](state)), { name });
  const flow = DBOS.registerWorkflow(
    async (input: FlowState) => {
      let state: FlowState = { ...input };
      state = { ...state, ...(await step('validate', state)) };
      state = { ...state, ...(await step('enrich', state)) };
      const child = await DBOS.startWorkflow(score, { queueName: TASK_QUEUE })(state);
      state = { ...state, ...(await child.getResult({ pollingIntervalMs: config.resultPollMs })) };
      state = { ...state, ...(await step('decide', state)) };
      state = { ...state, ...(await step('record', state)) };
      return state;
    },
    { name: FLOW_TYPE },
  );
  await DBOS.launch();
  await DBOS.registerQueue(TASK_QUEUE, {
    workerConcurrency: config.concurrency,
    minPollingIntervalMs: config.queuePollMs,
    onConflict: 'always_update',
  });
  return {
    async start(id, input) {
      await DBOS.startWorkflow(flow, { workflowID: id })(input);
    },
    close: () => DBOS.shutdown(),
  };
}

/** The installed DBOS package's version, for the notes (its exports do not include package.json). */
export function dbosVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@dbos-inc/dbos-sdk'));
  const root = entry.slice(0, entry.lastIndexOf(`${sep}dist${sep}`));
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
    .version;
}
