/**
 * `createRuntime`: the engine as an object, for embedding in any Node service (STYLE:
 * instances, not globals — a test runs a cloud and several edge agents side by side).
 *
 * ```ts
 * const runtime = createRuntime({ store, stepsRoot: './steps' });
 * await runtime.registry.registerFile('./payment.yaml');
 * const wf = await runtime.start('payment_authorization', { amount_minor: 1250 });
 * ```
 */
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ConflictError,
  createModelRegistry,
  createWasmRunner,
  DestinationPolicy,
  envSecrets,
  getWorkflowByIdempotencyKey,
  inlineExecutor,
  listAuditEvents,
  listWorkflows,
  nextTimerDue,
  storeWasmSource,
  systemClock,
  timeOrderedIds,
  WorkflowError,
  type Clock,
  type FaultHook,
  type Ids,
  type JsonObject,
  type ModelRegistry,
  type ModelRegistryOptions,
  type DestinationPolicyOptions,
  type SecretProvider,
  type StepExecutor,
  type WasmBinarySource,
  type WasmLimits,
  type Store,
  type StoredAuditEvent,
  type WorkflowDefinition,
  type WorkflowFilter,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { cancelWorkflow, pauseWorkflow, retryWorkflow, unpauseWorkflow } from './control.js';
import { driveWorkflow, loadWorkflow } from './drive.js';
import { createGroupCommitQueue, type StepDurability } from './groupCommitQueue.js';
import { restoreLive, type Internals, type SettledHook, type StateGuard } from './internals.js';
import { describeStatechart, type Statechart } from '../workflow/statechart.js';
import { workflowContext, workflowPosition, workflowStatus } from '../workflow/snapshot.js';
import { isTerminal } from './planTransition.js';
import { drainTasks, type TaskRunOptions } from './tasks.js';
import {
  fireTimeouts,
  maintain,
  TIMEOUT_TIMER_KINDS,
  type MaintenanceOptions,
  type MaintenanceReport,
} from './maintenance.js';
import { serve, type ServeOptions, type Service } from './serve.js';
import { createWorkflowRegistry, type WorkflowRegistry } from './registry.js';
import { startHeartbeatPulse } from './pulse.js';
import { createInspectionSink } from '../inspect/sink.js';
import { resolveInspector, type InspectOption } from '../inspect/inspectOption.js';
import { wfEvents } from '../workflow/events.js';
import {
  checkInput,
  checkInputSchema,
  createPlan,
  definitionOf,
  initialRecord,
  startBatch,
  type StartManyOptions,
} from './start.js';

export type { StartManyOptions };
export type { SettledHook, SettledWorkflow, StateGuard } from './internals.js';

/** Options of {@link createRuntime}. */
export interface RuntimeOptions {
  store: Store;
  /** Where step functions run (default: in this process, modules under `stepsRoot`). */
  executor?: StepExecutor;
  /** Root of step modules for the default executor (default: the working directory). */
  stepsRoot?: string;
  clock?: Clock;
  /** Ids of new workflows and schedules (default: UUIDv7, {@link timeOrderedIds}). */
  ids?: Ids;
  /** Secrets for `{{ secrets.NAME }}` and `context.secrets` (default: SAFFRON_SECRET_<NAME>). */
  secrets?: SecretProvider;
  /**
   * Where HTTP steps may connect: by default public addresses only; `allowedPrivateNetworks`
   * opens loopback, private ranges or single addresses, `refusedLocalPorts` closes ports of
   * this machine whatever is allowed.
   */
  outbound?: DestinationPolicyOptions;
  /**
   * Models of AI_INFERENCE steps: `modelsDir` (default: SAFFRON_MODELS_DIR) holds
   * `<model_name>.onnx` files, `model_path` resolves under `root` (default: `stepsRoot`),
   * `custom` registers `runtime: custom` functions and `providers` adds runtimes such as
   * tflite (definitions naming a runtime without a provider fail to load). The runtime owns
   * the registry: `close()` releases its sessions.
   */
  inference?: ModelRegistryOptions;
  /**
   * Where WASM steps' binaries come from, by SHA-256 (default: from the store — its
   * `device_wasm_cache` on SQLite, `wasm_components` files under WASM_STORAGE_DIR on
   * PostgreSQL and PGlite; see `storeWasmSource`).
   */
  wasmSource?: WasmBinarySource;
  /** WASM sandbox limits: threads (default 2), guest memory cap (256 MiB), stdout (1 MiB). */
  wasm?: WasmLimits;
  /** Workflow types this runtime can start; more can be registered later. */
  definitions?: readonly WorkflowDefinition[];
  registry?: WorkflowRegistry;
  /** This node's name in heartbeats (default host:pid). */
  workerId?: string;
  /** How often a running workflow's heartbeat is refreshed (default 30 s). */
  heartbeatIntervalMs?: number;
  /**
   * Most step commits of concurrent workflows written in one transaction (default 16 on
   * PostgreSQL, 64 on SQLite; 1 disables batching). On PostgreSQL two such transactions are
   * open at once: while one is written the next gathers, where one large batch would
   * serialize every workflow behind one statement.
   */
  maxCommitBatch?: number;
  /**
   * When step commits reach the disk: `every-step` (default) writes and flushes each before
   * it is acknowledged; `boundaries` flushes a workflow's end, its waits, the last commit of
   * every drive, a keyed or undriven creation and every commit with side rows (SAF record,
   * tasks, timers, children), and holds the intermediate steps of a running workflow — and
   * the creation of one it drives at once — to write them in the same transaction (or after
   * 50 ms): a crash or a power cut may then repeat them, or lose a workflow whose first drive
   * had not answered (groupCommitQueue.ts). SQLite only; the edge agent's choice, where each flush
   * is a disk sync the customer waits for.
   */
  stepDurability?: StepDurability;
  /**
   * How long `boundaries` holds an intermediate step's commit at most before it writes it on
   * its own (default 50 ms): a step that takes longer than this does not keep the steps
   * before it from the database.
   */
  stepHoldMs?: number;
  /**
   * Run ASYNC and PARALLEL tasks in this process as soon as they are dispatched (default
   * true). Set false when separate workers (`saffron worker`, {@link Runtime.work}) run them.
   */
  runTasks?: boolean;
  /** How long a task claimed by this node stays its own before another worker may take it over (default 5 min). */
  taskLeaseMs?: number;
  /** Drive spawned and sub-workflows in the background (default true). */
  driveChildren?: boolean;
  /** Called at named points of the commit path; tests use it to simulate crashes. */
  faults?: FaultHook;
  /**
   * Called when a workflow reaches a terminal status; what it returns is written in the
   * same transaction as that status (an outbox: the edge agent records a store-and-forward
   * transaction this way, so a completed payment and its record exist together or not at
   * all). Must not throw for a workflow it does not care about: return undefined.
   */
  onSettled?: SettledHook;
  /**
   * Checks the state a step leaves before it is committed (also the state merged from a
   * PARALLEL or ASYNC step's task results): an error it returns fails the step instead, and
   * the workflow keeps the state it had before the step. A task's result is checked before
   * it is stored: a refused one fails the task (no retry), its error text starting with the
   * guard's code. The edge agent refuses card numbers in clear this way. None by default.
   */
  stateGuard?: StateGuard;
  /** Where errors of background drives go (default: stderr). */
  onBackgroundError?: (error: unknown, workflowId: string) => void;
  /**
   * Stream each workflow's committed transitions to Stately's inspector: a `ws://` / `wss://`
   * URL (a WebSocket client this runtime owns), an observer of the inspection messages, or
   * either with extra masking (`{ to, redact }`). Messages go out only after their commit is
   * written, with contexts, states and events redacted of card data and credentials; a slow or
   * absent inspector never blocks the engine (docs/guides/inspecting-statecharts.md).
   */
  inspect?: InspectOption;
}

/** Options of {@link Runtime.start}. */
export interface StartOptions {
  /** Starting again with the same key returns the first workflow instead of a new one. */
  idempotencyKey?: string;
  ownerId?: string;
  dataRegion?: string;
  /** Run the first step (and on while `automate_next`) before returning (default true). */
  run?: boolean;
}

/** The engine API. */
export interface Runtime {
  readonly registry: WorkflowRegistry;
  /** Models of AI_INFERENCE steps: register custom functions, preload models. */
  readonly inference: ModelRegistry;
  /** Create a workflow of a registered type (or of the given definition) and run its first step. */
  start(
    workflow: string | WorkflowDefinition,
    data?: JsonObject,
    options?: StartOptions,
  ): Promise<WorkflowRecord>;
  /**
   * Create one workflow of a type per item of `data` in one transaction (all or none), then
   * drive each as `start` does; returns them in `data`'s order.
   */
  startMany(
    workflow: string | WorkflowDefinition,
    data: readonly JsonObject[],
    options?: StartManyOptions,
  ): Promise<WorkflowRecord[]>;
  /** Run the current step of an ACTIVE workflow, merging `input` into state first. */
  next(id: string, input?: JsonObject): Promise<WorkflowRecord>;
  /** Give human input to a WAITING_HUMAN_INPUT workflow (re-runs its step), or undo an operator pause. */
  resume(id: string, input?: JsonObject): Promise<WorkflowRecord>;
  /** Re-activate a FAILED, FAILED_ROLLED_BACK or CANCELLED workflow at `fromStep` and run it. */
  retry(id: string, options?: { fromStep?: string; input?: JsonObject }): Promise<WorkflowRecord>;
  cancel(id: string, options?: { reason?: string }): Promise<WorkflowRecord>;
  /** Operator pause: nothing runs until `resume`. */
  pause(id: string): Promise<WorkflowRecord>;
  get(id: string): Promise<WorkflowRecord>;
  list(filter?: WorkflowFilter): Promise<WorkflowRecord[]>;
  /** The audit trail of a workflow, oldest first. */
  audit(id: string): Promise<StoredAuditEvent[]>;
  /**
   * A workflow with the graph of its compiled machine and where in it the workflow is
   * (`key` a state of the graph, `sub` the substate inside a step). The record's `status` is
   * read from the same stored snapshot as the position, so the two always agree.
   */
  statechart(id: string): Promise<{
    record: WorkflowRecord;
    chart: Statechart;
    position: { key: string; sub: string | null };
    /** How many times each state was entered. */
    visits: Record<string, number>;
  }>;
  /**
   * Run `next` until the workflow is no longer ACTIVE, then wait for background work.
   * `known` is the workflow as the caller just got it from this runtime (`start`, `next`,
   * `resume`): it is not read again, and it is re-read after the wait only when background
   * work ran (a sub-workflow that ended may have re-activated it).
   */
  runUntilSettled(id: string, known?: WorkflowRecord): Promise<WorkflowRecord>;
  /**
   * Claim and run due ASYNC / PARALLEL tasks until none is left (a worker's unit of work);
   * returns how many ran.
   */
  work(options?: TaskRunOptions): Promise<number>;
  /** One maintenance pass: zombie recovery, PARALLEL timeouts, due cron schedules. */
  maintain(options?: MaintenanceOptions): Promise<MaintenanceReport>;
  /** Run tasks and maintenance in a loop until the returned service is stopped. */
  serve(options?: ServeOptions): Service;
  /** Wait for background drives (children, parents) to finish. */
  drain(): Promise<void>;
  /** Stop the worker loops `serve` started, drain, and release the executor. The store belongs to the caller. */
  close(): Promise<void>;
}

/** Longest wait before a draining `runUntilSettled` looks for a new timeout of its workflow. */
const TIMEOUT_POLL_MS = 1000;

/** The longest delay a Node timer keeps (a larger one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Create a runtime over `options.store`. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const hold = options.stepHoldMs;
  if (hold !== undefined && !(Number.isInteger(hold) && hold > 0 && hold <= MAX_TIMER_MS))
    throw new RangeError(
      `stepHoldMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${hold}`,
    );
  const modelsDir = options.inference?.modelsDir ?? process.env.SAFFRON_MODELS_DIR;
  const inference = createModelRegistry({
    ...options.inference,
    root: options.inference?.root ?? options.stepsRoot ?? process.cwd(),
    ...(modelsDir === undefined ? {} : { modelsDir }),
  });
  const locks = new Map<string, Promise<unknown>>();
  const pending = new Set<Promise<unknown>>();
  const onBackgroundError =
    options.onBackgroundError ??
    ((error: unknown, id: string) =>
      process.stderr.write(
        `saffron: background drive of workflow ${id} failed: ${String(error)}\n`,
      ));
  const inspector = options.inspect === undefined ? undefined : resolveInspector(options.inspect);
  const sink =
    inspector &&
    createInspectionSink({
      observer: inspector.observer,
      clock: options.clock ?? systemClock,
      // called only after a commit, when `internals` exists
      compiledOf: (hash) => internals.compiled.get(hash),
      ...(inspector.redact ? { redact: inspector.redact } : {}),
    });
  const internals: Internals = {
    store: options.store,
    executor: options.executor ?? inlineExecutor({ stepsRoot: options.stepsRoot ?? process.cwd() }),
    clock: options.clock ?? systemClock,
    ids: options.ids ?? timeOrderedIds(),
    secrets: options.secrets ?? envSecrets(),
    destinations: new DestinationPolicy(options.outbound),
    inference,
    wasm: createWasmRunner({
      ...options.wasm,
      source: options.wasmSource ?? storeWasmSource(options.store),
    }),
    registry:
      options.registry ??
      createWorkflowRegistry(options.definitions, { aiRuntimes: inference.runtimes() }),
    workerId: options.workerId ?? `${hostname()}:${process.pid}`,
    faults: options.faults,
    onSettled: options.onSettled,
    stateGuard: options.stateGuard,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 30_000,
    lastBeat: new Map(),
    driving: new Set(),
    groupCommit: createGroupCommitQueue(
      options.store,
      options.maxCommitBatch,
      undefined,
      options.stepDurability,
      options.stepHoldMs,
      sink && ((plans) => sink.committed(plans)),
    ),
    driveChildren: options.driveChildren ?? true,
    runTasks: options.runTasks ?? true,
    taskDrain: { running: false, again: false },
    taskWake: undefined,
    taskLeaseMs: options.taskLeaseMs ?? 300_000,
    heldTasks: new Map(),
    onError: onBackgroundError,
    onCommitted: sink && ((plans) => sink.committed(plans)),
    compiled: new Map(),
    compiledByObject: new WeakMap(),
    exclusive<T>(id: string, work: () => Promise<T>): Promise<T> {
      const previous = locks.get(id) ?? Promise.resolve();
      const run = previous.then(work, work);
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      locks.set(id, tail);
      void tail.then(() => {
        if (locks.get(id) === tail) locks.delete(id);
      });
      return run;
    },
    drive: (id, request) => driveWorkflow(internals, id, request),
    background(id, work) {
      const task: Promise<unknown> = Promise.resolve()
        .then(work)
        .catch((error: unknown) => onBackgroundError(error, id))
        .finally(() => pending.delete(task));
      pending.add(task);
    },
  };
  /**
   * Run an operator control (committed outside the commit queue) and tell the inspector of it
   * when it changed the workflow.
   */
  const inspected = async (
    id: string,
    event: Parameters<NonNullable<typeof sink>['changed']>[1],
    control: () => Promise<WorkflowRecord>,
  ): Promise<WorkflowRecord> => {
    if (!sink) return control();
    const before = await loadWorkflow(internals, id).catch(() => undefined);
    const after = await control();
    if (before === undefined || after.version !== before.version) sink.changed(after, event);
    return after;
  };
  if (options.registry && options.definitions)
    for (const d of options.definitions) options.registry.register(d);

  const stopPulse = startHeartbeatPulse(internals);

  /** Wait for background drives; true when there were any. */
  const drainAll = async (): Promise<boolean> => {
    const waited = pending.size > 0;
    while (pending.size > 0) await Promise.all([...pending]);
    return waited;
  };
  const drain = async () => {
    await drainAll();
  };

  /**
   * {@link drainAll}, firing the timeouts of `id` that fall due meanwhile. A process that
   * drives one workflow to its end (`saffron run`, inline or threads) may have no maintenance
   * loop: without this, a PARALLEL step's tasks running here outlived its `timeout_seconds`
   * and the step completed. The wait is on the wall clock, measured against `clock.now()`,
   * and re-reads the next due time at least every {@link TIMEOUT_POLL_MS} (the drain may
   * reach a later PARALLEL step with a timeout of its own).
   */
  const drainFiringTimeouts = async (id: string): Promise<boolean> => {
    if (pending.size === 0) return false;
    let drained = false;
    const done = drainAll().finally(() => {
      drained = true;
    });
    while (!drained) {
      const due = await nextTimerDue(internals.store, id, TIMEOUT_TIMER_KINDS);
      const wait =
        due === undefined
          ? TIMEOUT_POLL_MS
          : Math.min(TIMEOUT_POLL_MS, due.getTime() - internals.clock.now().getTime());
      if (wait > 0) {
        const stop = new AbortController();
        await Promise.race([done, delay(wait, undefined, { signal: stop.signal }).catch(() => {})]);
        stop.abort();
      } else await fireTimeouts(internals, id);
    }
    await done;
    return true;
  };

  /**
   * Run the next step of `id`; when a background drive moved it on meanwhile (a finished
   * child resumed its parent and drove it to the end), the fresh record instead.
   */
  const stepOrReload = async (id: string): Promise<WorkflowRecord> => {
    try {
      return await driveWorkflow(internals, id, { kind: 'next' });
    } catch (error) {
      if (error instanceof WorkflowError && error.code === 'WORKFLOW_NOT_ACTIVE')
        return loadWorkflow(internals, id);
      throw error;
    }
  };

  /** Worker loops started by `serve`, stopped by `close`. */
  const services = new Set<Service>();
  const runtime: Runtime = {
    registry: internals.registry,
    inference,

    async start(workflow, data, startOptions = {}) {
      const definition = definitionOf(internals, workflow);
      const initialData = checkInput(data ?? {}, 'workflow data') ?? {};
      checkInputSchema(definition, initialData, 'workflow data');
      const key = startOptions.idempotencyKey;
      if (key !== undefined) {
        const existing = await getWorkflowByIdempotencyKey(internals.store, key);
        if (existing) return existing;
      }
      const now = internals.clock.now();
      const record = initialRecord(internals, definition, initialData, now, startOptions);
      const id = record.id;
      try {
        const driver = startOptions.run === false ? undefined : internals.workerId;
        if (driver) internals.lastBeat.set(id, now.getTime());
        await internals.groupCommit.commit(createPlan(record, now, driver), now);
      } catch (error) {
        if (error instanceof ConflictError && key !== undefined) {
          const existing = await getWorkflowByIdempotencyKey(internals.store, key);
          if (existing) return existing;
        }
        throw error;
      }
      if (startOptions.run === false) return record;
      return driveWorkflow(internals, id, { kind: 'start' }, record);
    },

    startMany: (workflow, data, startOptions = {}) =>
      startBatch(internals, definitionOf(internals, workflow), data, startOptions),

    next: (id, input) =>
      driveWorkflow(internals, id, { kind: 'next', input: checkInput(input, 'input') }),

    async resume(id, input) {
      const record = await loadWorkflow(internals, id);
      // a deadline that passed before the input came wins, fired by a maintenance pass or not
      if (record.status === 'WAITING_HUMAN_INPUT') await fireTimeouts(internals, id, true);
      if (record.status === 'PAUSED') {
        const resumed = await inspected(id, wfEvents.unpaused(), () =>
          unpauseWorkflow(internals, id),
        );
        if (resumed.status === 'PENDING_SUB_WORKFLOW')
          return driveWorkflow(internals, id, { kind: 'child-done' });
        return resumed;
      }
      return driveWorkflow(internals, id, {
        kind: 'resume',
        input: checkInput(input ?? {}, 'input') ?? {},
      });
    },

    async retry(id, retryOptions = {}) {
      await inspected(
        id,
        { type: 'wf.retried', ...(retryOptions.fromStep ? { step: retryOptions.fromStep } : {}) },
        () =>
          retryWorkflow(
            internals,
            id,
            retryOptions.fromStep,
            checkInput(retryOptions.input, 'input'),
          ),
      );
      return driveWorkflow(internals, id, { kind: 'continue' });
    },

    cancel: (id, cancelOptions = {}) =>
      inspected(id, wfEvents.cancelled(), () =>
        cancelWorkflow(internals, id, cancelOptions.reason),
      ),
    pause: (id) => inspected(id, { type: 'wf.paused' }, () => pauseWorkflow(internals, id)),
    get: (id) => loadWorkflow(internals, id),
    list: (filter) => listWorkflows(internals.store, filter),
    audit: (id) => listAuditEvents(internals.store, id),
    async statechart(id) {
      const { record, live } = restoreLive(internals, await loadWorkflow(internals, id));
      return {
        // status and position both from the one snapshot: a status column written apart from
        // its snapshot must not show a workflow PENDING_ASYNC in a completed state
        record: { ...record, status: workflowStatus(live) },
        chart: describeStatechart(live.compiled),
        position: workflowPosition(live),
        // a copy: restored snapshots are shared between workflows (workflow/snapshot.ts)
        visits: { ...workflowContext(live).visits },
      };
    },

    async runUntilSettled(id, known) {
      let record = known?.id === id ? known : await loadWorkflow(internals, id);
      for (;;) {
        while (record.status === 'ACTIVE') record = await stepOrReload(id);
        // a sub-workflow may have ended during the drain and re-activated its parent
        if (!(await drainFiringTimeouts(id))) return record;
        record = await loadWorkflow(internals, id);
        if (record.status !== 'ACTIVE') return record;
      }
    },

    drain,

    work: (workOptions) => drainTasks(internals, workOptions),

    maintain: (maintenanceOptions) =>
      maintain(internals, (type, data, o) => runtime.start(type, data, o), maintenanceOptions),

    serve(serveOptions) {
      const service = serve(internals, runtime, serveOptions);
      services.add(service);
      return {
        get tasksRun() {
          return service.tasksRun;
        },
        async stop() {
          await service.stop();
          services.delete(service);
        },
      };
    },

    async close() {
      // worker loops first: they stop claiming, finish their tasks, and end their heartbeats
      await Promise.all([...services].map((s) => s.stop()));
      services.clear();
      await drain();
      await internals.groupCommit.release();
      await stopPulse();
      await internals.executor.close();
      await inference.close();
      await internals.wasm.close();
      await inspector?.client?.close();
    },
  };
  return runtime;
}

export { isTerminal };
