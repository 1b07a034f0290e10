/**
 * Workflow snapshots: computing the next one (pure), and persisting / restoring them as JSON.
 * A persisted snapshot carries the machine id and the definition hash; restoring one that
 * does not fit its workflow's definition is a clear SNAPSHOT_INVALID error on that workflow,
 * never a crash of the process.
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

/** Apply `event`; an event the current state does not accept is a programming error. */
export function nextWorkflowSnapshot(
  current: WorkflowSnapshot,
  event: WorkflowEvent,
): WorkflowSnapshot {
  if (!current.snapshot.can(event)) {
    throw new Error(
      `workflow machine in state ${JSON.stringify(current.snapshot.value)} does not accept ${event.type}`,
    );
  }
  const snapshot = pureTransition(current.compiled.machine, current.snapshot, event);
  return { compiled: current.compiled, snapshot };
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
  try {
    const snapshot = compiled.machine.resolveState({
      value: p.value,
      context: p.context,
    }) as AnyMachineSnapshot;
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

/** The workflow status a snapshot means (DESIGN §3.6). */
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
