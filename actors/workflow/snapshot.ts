/**
 * Workflow snapshots: computing the next one (pure), and persisting / restoring them as JSON.
 * A persisted snapshot carries the machine id and the definition hash; restoring one that
 * does not fit its workflow's definition is a clear SNAPSHOT_INVALID error on that workflow,
 * never a crash of the process.
 *
 * Restores and transitions are memoized. A workflow machine only assigns (no history states,
 * delays, spawned actors or side effects) and its guards read only its context and the event,
 * so a restored snapshot is a function of its value and context, and the next one a function
 * of those and the event: equal JSON, equal result. Snapshots are immutable, so one object
 * serves every workflow at the same position with the same bookkeeping — the common case, as
 * thousands of workflows of one type walk the same steps. A hit costs one JSON.stringify of a
 * small object instead of XState resolving state nodes (a restore) or computing a microstep
 * after checking the event is accepted (a transition).
 */
import type { AnyMachineSnapshot, StateValue } from 'xstate';
import { pureTransition } from '../pureTransition.js';
import { WorkflowError, type WorkflowStatus } from '../../runtime/index.js';
import { FINAL_STATES, type CompiledWorkflow } from './compileMachine.js';
import type { WorkflowMachineContext } from './context.js';
import type { WorkflowEvent } from './events.js';

/** What is stored in workflow_executions.actor_snapshot. */
export interface PersistedWorkflowSnapshot {
  machineId: string;
  definitionHash: string;
  value: StateValue;
  context: WorkflowMachineContext;
}

/** A live snapshot with its compiled machine. */
export interface WorkflowSnapshot {
  compiled: CompiledWorkflow;
  snapshot: AnyMachineSnapshot;
}

/** The snapshot of a new workflow. */
export function initialWorkflowSnapshot(compiled: CompiledWorkflow): WorkflowSnapshot {
  return { compiled, snapshot: compiled.initialSnapshot() };
}

/** Most restores and transitions remembered, for all machines together; past it, the oldest go. */
const MAX_MEMO = 4096;

/** Remembered snapshots by key (see {@link memoKey}), with the machine each belongs to. */
const memo = new Map<string, { compiled: CompiledWorkflow; snapshot: AnyMachineSnapshot }>();

/** The JSON of each memoized or restored snapshot's value and context (its identity in the memo). */
const contentKeys = new WeakMap<AnyMachineSnapshot, string>();

function contentKey(snapshot: AnyMachineSnapshot): string {
  let key = contentKeys.get(snapshot);
  if (key === undefined) {
    key = JSON.stringify([snapshot.value, snapshot.context]);
    contentKeys.set(snapshot, key);
  }
  return key;
}

/** The key of a restore (`event` undefined) or of a transition from the snapshot of `content`. */
const memoKey = (compiled: CompiledWorkflow, content: string, event?: WorkflowEvent) =>
  `${compiled.hash}\n${content}\n${event === undefined ? '' : JSON.stringify(event)}`;

function recall(compiled: CompiledWorkflow, key: string): AnyMachineSnapshot | undefined {
  const hit = memo.get(key);
  // a definition evicted from a runtime's cache and compiled again is another machine
  return hit?.compiled === compiled ? hit.snapshot : undefined;
}

/** Freeze a JSON value and everything in it. */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
}

function remember(compiled: CompiledWorkflow, key: string, snapshot: AnyMachineSnapshot): void {
  if (memo.size >= MAX_MEMO) memo.delete(memo.keys().next().value!);
  // shared from now on: a change made through one workflow would show in every other
  deepFreeze(snapshot.context);
  memo.set(key, { compiled, snapshot });
}

/** Apply `event`; an event the current state does not accept is a programming error. */
export function nextWorkflowSnapshot(
  current: WorkflowSnapshot,
  event: WorkflowEvent,
): WorkflowSnapshot {
  const { compiled } = current;
  const key = memoKey(compiled, contentKey(current.snapshot), event);
  let snapshot = recall(compiled, key);
  if (snapshot === undefined) {
    if (!current.snapshot.can(event)) {
      throw new Error(
        `workflow machine in state ${JSON.stringify(current.snapshot.value)} does not accept ${event.type}`,
      );
    }
    snapshot = pureTransition(compiled.machine, current.snapshot, event);
    remember(compiled, key, snapshot);
  }
  return { compiled, snapshot };
}

/** The JSON form to store. */
export function persistWorkflowSnapshot(s: WorkflowSnapshot): PersistedWorkflowSnapshot {
  return {
    machineId: s.compiled.machine.id,
    definitionHash: s.compiled.hash,
    value: s.snapshot.value as StateValue,
    context: s.snapshot.context as WorkflowMachineContext,
  };
}

/** Rebuild a snapshot from its JSON form, checking it belongs to `compiled`. */
export function restoreWorkflowSnapshot(
  compiled: CompiledWorkflow,
  persisted: unknown,
  workflowId: string,
): WorkflowSnapshot {
  const p = persisted as Partial<PersistedWorkflowSnapshot> | null;
  const invalid = (why: string, cause?: unknown) =>
    new WorkflowError(
      'SNAPSHOT_INVALID',
      `workflow ${workflowId}: stored snapshot cannot be restored: ${why}`,
      { cause, details: { workflowId } },
    );
  if (!p || typeof p !== 'object' || p.value === undefined || !p.context)
    throw invalid('it is missing or malformed');
  if (p.machineId !== compiled.machine.id)
    throw invalid(`it belongs to machine ${String(p.machineId)}, not ${compiled.machine.id}`);
  if (p.definitionHash !== compiled.hash)
    throw invalid(
      `it was taken with definition ${String(p.definitionHash)}, the workflow's snapshot definition is ${compiled.hash}`,
    );
  const content = JSON.stringify([p.value, p.context]);
  const key = memoKey(compiled, content);
  const known = recall(compiled, key);
  if (known) return { compiled, snapshot: known };
  try {
    const snapshot = compiled.machine.resolveState({
      value: p.value,
      context: p.context,
    }) as AnyMachineSnapshot;
    contentKeys.set(snapshot, content);
    remember(compiled, key, snapshot);
    return { compiled, snapshot };
  } catch (error) {
    throw invalid(`its state ${JSON.stringify(p.value)} does not exist in the machine`, error);
  }
}

/** The top-level state key and substate of a snapshot. */
export function workflowPosition(s: WorkflowSnapshot): { key: string; sub: string | null } {
  const value = s.snapshot.value as StateValue;
  if (typeof value === 'string') return { key: value, sub: null };
  const [key, sub] = Object.entries(value)[0] ?? ['', null];
  return { key, sub: typeof sub === 'string' ? sub : null };
}

/** The workflow status a snapshot means (docs/architecture.md#statuses). */
export function workflowStatus(s: WorkflowSnapshot): WorkflowStatus {
  const context = s.snapshot.context as WorkflowMachineContext;
  const { key, sub } = workflowPosition(s);
  if (key in FINAL_STATES) return FINAL_STATES[key as keyof typeof FINAL_STATES];
  if (context.pausedFrom !== null) return 'PAUSED';
  if (key === 'compensating') return 'FAILED';
  switch (sub) {
    case 'waitingHuman':
      return 'WAITING_HUMAN_INPUT';
    case 'waitingChild':
      return 'PENDING_SUB_WORKFLOW';
    case 'waitingTasks':
      return 'PENDING_ASYNC';
    default:
      return 'ACTIVE';
  }
}

/** The context of a snapshot. */
export function workflowContext(s: WorkflowSnapshot): WorkflowMachineContext {
  return s.snapshot.context as WorkflowMachineContext;
}
