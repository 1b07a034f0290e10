/**
 * Planning one transition of a live workflow: what happened (machine events, a step's
 * effects) becomes a commit plan (commitPlan.ts) — the new workflow columns, the heartbeat,
 * the audit rows and the outbox — computed, not executed (STYLE: pure transitions, effects
 * as data). Writing the plan is writePlans.ts's business.
 */
import {
  isTerminalWorkflowStatus,
  type ChildWorkflowSpec,
  type JsonObject,
  type NewWorkflow,
  type StepDefinition,
  type StepEffects,
  type WorkflowRecord,
  type WorkflowStatus,
} from '../../runtime/index.js';
import { FINAL_STATES } from '../workflow/compileMachine.js';
import { wfEvents, type WorkflowEvent } from '../workflow/events.js';
import {
  initialWorkflowSnapshot,
  nextWorkflowSnapshot,
  persistWorkflowSnapshot,
  workflowPosition,
  workflowStatus,
  type WorkflowSnapshot,
} from '../workflow/snapshot.js';
import { newPlan, type CommitPlan } from './commitPlan.js';
import { compileCached, type Internals, type LiveWorkflow } from './internals.js';

/** Whether a status is terminal. */
export const isTerminal = (status: WorkflowStatus): boolean => isTerminalWorkflowStatus(status);

/** The step's `automate_next`, else the workflow-wide default. */
export function automateNext(step: StepDefinition, live: WorkflowSnapshot): boolean {
  const own = 'automate_next' in step ? step.automate_next : undefined;
  return own ?? live.compiled.definition.automate_next;
}

/** The compensation a succeeding step registers (saga). */
export function compensationOf(step: StepDefinition): string | undefined {
  return step.type === 'STANDARD' || step.type === 'ASYNC' ? step.compensate_function : undefined;
}

/** A new child workflow row (and its start event) for a spawned or sub-workflow. */
export function childRecord(
  internals: Internals,
  parent: WorkflowRecord,
  spec: ChildWorkflowSpec,
): NewWorkflow {
  const definition = internals.registry.get(spec.workflowType);
  if (!definition) throw new Error(`unknown workflow type ${spec.workflowType}`);
  const compiled = compileCached(internals, definition);
  const snapshot = initialWorkflowSnapshot(compiled);
  return {
    id: spec.id,
    workflowType: definition.workflow_type,
    workflowVersion: definition.workflow_version ?? null,
    status: 'ACTIVE',
    currentStepIndex: 0,
    currentStep: definition.steps[0]!.name,
    state: { ...structuredClone(definition.initial_state), ...spec.initialData },
    definitionSnapshot: definition as unknown as JsonObject,
    definitionHash: compiled.hash,
    actorSnapshot: persistWorkflowSnapshot(snapshot) as unknown as JsonObject,
    parentWorkflowId: spec.parent ? parent.id : null,
    ownerId: parent.ownerId,
    dataRegion: parent.dataRegion,
    metadata: {
      started_by: {
        workflow_id: parent.id,
        step: spec.stepName,
        relation: spec.parent ? 'sub_workflow' : 'spawned',
      },
    },
  };
}

/**
 * A running workflow's heartbeat is written when this node starts driving it and then at
 * most every half interval — not on every step, which would update a second hot row per
 * step; a workflow that stops running (waits or ends) has its heartbeat removed.
 */
function heartbeatFor(
  internals: Internals,
  id: string,
  running: boolean,
  step: string,
  now: Date,
  wasRunning: boolean,
): CommitPlan['heartbeat'] {
  if (!running) {
    internals.lastBeat.delete(id);
    return 'delete';
  }
  // Only a workflow that was already running here can still have this node's row; one that
  // was waiting (tasks, a child, a human) had its heartbeat removed, maybe by another node.
  const last = internals.lastBeat.get(id);
  if (wasRunning && last !== undefined && now.getTime() - last < internals.heartbeatIntervalMs / 2)
    return 'keep';
  internals.lastBeat.set(id, now.getTime());
  return { workerId: internals.workerId, currentStep: step, at: now };
}

/** A plan under construction for one transition of a live workflow. */
export interface Transition {
  plan: CommitPlan;
  next: WorkflowSnapshot;
  state: JsonObject;
  status: WorkflowStatus;
}

/**
 * Apply `events` to the live snapshot and fill the row changes and heartbeat. `drivenOn`
 * says whether this node goes on driving the workflow after the commit: a heartbeat row
 * means "someone is driving this workflow", so an ACTIVE workflow that waits for an explicit
 * `next()` has none, and the zombie scanner never runs a step nobody asked for.
 */
export function buildTransition(
  internals: Internals,
  current: LiveWorkflow,
  events: readonly WorkflowEvent[],
  state: JsonObject,
  effects: StepEffects | undefined,
  drivenOn = false,
): Transition {
  const { record } = current;
  let next = current.live;
  for (const event of events) next = nextWorkflowSnapshot(next, event);
  const status = workflowStatus(next);
  const { key } = workflowPosition(next);
  const now = internals.clock.now();
  const running = key === 'compensating' || (status === 'ACTIVE' && drivenOn);
  const steps = next.compiled.definition.steps;
  const at = next.compiled.stepAt(key);
  const plan = newPlan(
    record.id,
    record.version,
    {
      status,
      state,
      actorSnapshot: persistWorkflowSnapshot(next) as unknown as JsonObject,
      currentStepIndex: at
        ? at.index
        : key === 'completed'
          ? steps.length
          : record.currentStepIndex,
      currentStep: at ? at.step.name : key === 'completed' ? null : record.currentStep,
    },
    heartbeatFor(internals, record.id, running, key, now, current.record.status === 'ACTIVE'),
  );
  // the live record is the row at its version (it advances with every commit of this drive)
  plan.statusBefore = record.status;
  // a human resume is applied before the step it triggers runs (drive.ts, resumeHuman)
  const resumed =
    record.status === 'WAITING_HUMAN_INPUT' && workflowStatus(current.live) !== record.status;
  plan.events = resumed ? [wfEvents.humanResumed(), ...events] : events;
  if (effects) {
    for (const child of effects.children) {
      const row = childRecord(internals, record, child);
      plan.children.push(row);
      if (internals.driveChildren)
        plan.childBeats.push({
          workflowId: row.id,
          workerId: internals.workerId,
          currentStep: row.currentStep ?? null,
          at: now,
        });
      plan.audit.push({
        workflowId: row.id,
        eventType: 'WORKFLOW_STARTED',
        eventData: { started_by: record.id, step: child.stepName },
      });
    }
    for (const s of effects.schedules)
      plan.schedules.push({ id: internals.ids.uuid(), sourceWorkflowId: record.id, ...s });
    for (const l of effects.logs) plan.logs.push({ workflowId: record.id, ...l, at: now });
    for (const a of effects.audit) plan.audit.push({ workflowId: record.id, ...a });
  }
  if (internals.onSettled && isTerminal(status) && !isTerminal(record.status)) {
    const write = internals.onSettled({ record, status, state });
    if (write) plan.outbox.push(write);
  }
  // a timer can be pending only while a retry is scheduled
  if (
    key in FINAL_STATES &&
    (current.live.snapshot.context as { retryAt: string | null }).retryAt !== null
  ) {
    plan.settleTimers.push({ status: 'CANCELLED' });
  }
  return { plan, next, state, status };
}
