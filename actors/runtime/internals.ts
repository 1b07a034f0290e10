/** What the runtime's parts share: injected dependencies and per-instance caches. */
import {
  parseDefinitionObject,
  WorkflowError,
  type Clock,
  type DestinationPolicy,
  type FaultHook,
  type FaultPoint,
  type Ids,
  type JsonObject,
  type ModelRegistry,
  type SaffronError,
  type SecretProvider,
  type StepExecutor,
  type WasmRunner,
  type Store,
  type StoreHandle,
  type WorkflowDefinition,
  type WorkflowRecord,
  type WorkflowStatus,
} from '../../runtime/index.js';
import { compileWorkflowMachine, type CompiledWorkflow } from '../workflow/compileMachine.js';
import { restoreWorkflowSnapshot, type WorkflowSnapshot } from '../workflow/snapshot.js';
import type { CommitPlan } from './commitPlan.js';
import type { GroupCommitQueue } from './groupCommitQueue.js';
import type { DriveRequest } from './drive.js';
import type { WorkflowRegistry } from './registry.js';

/** A workflow reaching a terminal status, as this commit will leave it. */
export interface SettledWorkflow {
  /** The row before the transition (id, type, version, owner, metadata, …). */
  record: WorkflowRecord;
  status: WorkflowStatus;
  state: JsonObject;
}

/** Rows to write with a workflow's terminal commit, or undefined for none. */
export type SettledHook = (
  workflow: SettledWorkflow,
) => ((tx: StoreHandle) => Promise<void>) | undefined;

/**
 * A check of the state a step leaves: undefined to commit it, or the error that fails the
 * step instead (see `RuntimeOptions.stateGuard`).
 */
export type StateGuard = (state: JsonObject, stepName: string) => SaffronError | undefined;

/**
 * What one runtime is given: injected parts and hooks, fixed for its life. A function that
 * needs only these (a step's execution, a commit's audit rows) can take
 * `RuntimeDependencies` rather than the whole of {@link Internals}.
 */
export interface RuntimeDependencies {
  store: Store;
  executor: StepExecutor;
  clock: Clock;
  ids: Ids;
  secrets: SecretProvider;
  /** Which addresses HTTP steps may connect to. */
  destinations: DestinationPolicy;
  /** Models of AI_INFERENCE steps (owned by the runtime, closed with it). */
  inference: ModelRegistry;
  /** Sandbox of WASM steps (owned by the runtime, closed with it; threads start on first use). */
  wasm: WasmRunner;
  registry: WorkflowRegistry;
  faults: FaultHook | undefined;
  /** See `RuntimeOptions.onSettled`. */
  onSettled: SettledHook | undefined;
  /** See `RuntimeOptions.stateGuard`. */
  stateGuard: StateGuard | undefined;
  /** Told of plans once they are written (`RuntimeOptions.inspect`); must not throw. */
  onCommitted: ((plans: readonly CommitPlan[]) => void) | undefined;
  /** Report an error that has no caller to go to (background work, scheduler). */
  onError(error: unknown, subject: string): void;
}

/** How one runtime behaves: settings read from its options once, never changed. */
export interface RuntimeConfiguration {
  workerId: string;
  /** How often a running workflow's heartbeat is refreshed. */
  heartbeatIntervalMs: number;
  /** How long this node's task claims hold before another worker may take a task over. */
  taskLeaseMs: number;
  /** Run ASYNC / PARALLEL tasks in this process right after dispatching them. */
  runTasks: boolean;
  /** Drive spawned and sub-workflows (and parents after their child ends) in the background. */
  driveChildren: boolean;
}

/** What one runtime keeps while it runs: per-instance maps, sets and flags. */
export interface RuntimeState {
  /** When this node last wrote each running workflow's heartbeat (epoch ms). */
  lastBeat: Map<string, number>;
  /** Workflows inside a drive on this node right now (their heartbeats are pulsed). */
  driving: Set<string>;
  /**
   * Tasks this node claimed and is running until their outcome is recorded (serve.ts renews
   * their leases), each with what to do when the node finds it lost: abort its context.
   */
  heldTasks: Map<string, { lost(): void }>;
  /** This runtime's one background drain loop (see `kickTasks`). */
  taskDrain: { running: boolean; again: boolean };
  /** Set while `serve` runs: wakes its loop, which then claims the new tasks itself. */
  taskWake: (() => void) | undefined;
  /** Compiled machines by definition hash (bounded). */
  compiled: Map<string, CompiledWorkflow>;
  /** Compiled machines of definition objects this runtime was given. */
  compiledByObject: WeakMap<WorkflowDefinition, CompiledWorkflow>;
}

/** How the parts of one runtime coordinate: functions and queues bound to the instance. */
export interface RuntimeCoordination {
  /** The group-commit queue every step's plan goes through. */
  groupCommit: GroupCommitQueue;
  /**
   * Drive workflow `id` for `request` (drive.ts's `driveWorkflow`, bound to this runtime):
   * settling a task group continues its workflow through this, so the task modules that
   * drive.ts starts need not import drive.ts back.
   */
  drive(workflowId: string, request: DriveRequest): Promise<WorkflowRecord>;
  /** Track a background drive so `drain()` can wait for it. */
  background(workflowId: string, work: () => Promise<unknown>): void;
  /** Serialize work on one workflow within this process. */
  exclusive<T>(workflowId: string, work: () => Promise<T>): Promise<T>;
}

/**
 * Shared parts of one runtime instance, in four groups (see each). Engine functions take
 * the whole; a function that needs one group takes that group, so what it can reach is
 * visible in its signature.
 */
export interface Internals
  extends RuntimeDependencies, RuntimeConfiguration, RuntimeState, RuntimeCoordination {}

const MAX_COMPILED = 256;

/**
 * Compile `definition`, reusing the machine of an identical definition: by object identity
 * (registered definitions) or by hash (definitions restored from snapshots).
 */
export function compileCached(
  internals: Internals,
  definition: WorkflowDefinition,
  hash?: string,
): CompiledWorkflow {
  const cached =
    internals.compiledByObject.get(definition) ??
    (hash === undefined ? undefined : internals.compiled.get(hash));
  if (cached) return cached;
  const compiled = compileWorkflowMachine(definition);
  internals.compiledByObject.set(definition, compiled);
  if (internals.compiled.size >= MAX_COMPILED)
    internals.compiled.delete(internals.compiled.keys().next().value!);
  internals.compiled.set(compiled.hash, compiled);
  return compiled;
}

/** A workflow loaded for driving: its row, compiled machine and restored snapshot. */
export interface LiveWorkflow {
  record: WorkflowRecord;
  live: WorkflowSnapshot;
}

/** Rebuild the machine and snapshot of a stored workflow (always from its own definition snapshot). */
export function restoreLive(internals: Internals, record: WorkflowRecord): LiveWorkflow {
  let compiled = record.definitionHash ? internals.compiled.get(record.definitionHash) : undefined;
  if (!compiled) {
    const parsed = parseDefinitionObject(record.definitionSnapshot);
    if (!parsed.definition) {
      const first = parsed.issues.find((i) => i.severity === 'error');
      throw new WorkflowError(
        'SNAPSHOT_INVALID',
        `workflow ${record.id}: its definition snapshot is invalid: ${first ? `${first.path}: ${first.message}` : 'missing'}`,
        {
          details: { workflowId: record.id },
        },
      );
    }
    compiled = compileCached(internals, parsed.definition, record.definitionHash ?? undefined);
  }
  return { record, live: restoreWorkflowSnapshot(compiled, record.actorSnapshot, record.id) };
}

/** Call the fault hook, if any. */
export async function fault(
  internals: Internals,
  point: FaultPoint,
  workflowId: string,
  stepName: string,
): Promise<void> {
  if (internals.faults) await internals.faults(point, { workflowId, stepName });
}
