/**
 * What a step's outcome means for its workflow: the machine events, the new state, the
 * audit rows, metrics, and the outbox rows (tasks, timers) of the commit — computed as a
 * transition, not executed (STYLE: pure transitions, effects as data).
 */
import {
  StepError,
  type JsonObject,
  type NewTask,
  type SaffronError,
  type StepDefinition,
  type StepOutcome,
  type TaskSpec,
} from '../../runtime/index.js';
import { wfEvents, type WorkflowEvent } from '../workflow/events.js';
import { workflowContext, workflowPosition } from '../workflow/snapshot.js';
import type { Internals, LiveWorkflow } from './internals.js';
import {
  automateNext,
  buildTransition,
  compensationOf,
  type Transition,
} from './planTransition.js';

/** A step failure as audit rows and machine events record it: code, message and step. */
export const errorInfo = (error: SaffronError, step: string | null) => ({
  code: error.code,
  message: error.message,
  step,
});

/** Task rows for a dispatch: each carries the state snapshot and a plain context. */
function taskRows(
  internals: Internals,
  current: LiveWorkflow,
  step: StepDefinition,
  tasks: readonly TaskSpec[],
  state: JsonObject,
  group: string,
): NewTask[] {
  return tasks.map((t, index) => ({
    id: internals.ids.uuid(),
    workflowId: current.record.id,
    stepName: step.name,
    functionPath: t.functionPath,
    state,
    context: {
      taskName: t.name,
      workflowType: current.record.workflowType,
      idempotencyKey: `${group}:${t.name}`,
    },
    parallelGroup: group,
    taskIndex: index,
    maxAttempts: TASK_MAX_ATTEMPTS,
    runAfter: internals.clock.now(),
    dataRegion: current.record.dataRegion,
  }));
}

/** Attempts a task gets before it fails its step (retries back off exponentially). */
export const TASK_MAX_ATTEMPTS = 3;

/**
 * `outcome`, or a failure when the runtime's state guard refuses the state it leaves: the
 * step then fails with the guard's error, and nothing it would have started (a child, tasks)
 * is.
 */
function guardedOutcome(internals: Internals, step: StepDefinition, outcome: StepOutcome) {
  if (!internals.stateGuard || outcome.kind === 'failed' || outcome.kind === 'retry')
    return outcome;
  const refused = internals.stateGuard(outcome.state, step.name);
  if (!refused) return outcome;
  return {
    kind: 'failed' as const,
    error: refused,
    effects: outcome.effects,
    durationMs: outcome.durationMs,
  };
}

/** Turn a step outcome into a transition with its audit rows and metrics. */
export function outcomeTransition(
  internals: Internals,
  current: LiveWorkflow,
  step: StepDefinition,
  executed: StepOutcome,
  before: JsonObject,
): Transition {
  const outcome = guardedOutcome(internals, step, executed);
  const id = current.record.id;
  const compensation = compensationOf(step);
  const durationMs = Math.round(outcome.durationMs * 1000) / 1000;
  const stepExecuted = {
    workflowId: id,
    eventType: 'STEP_EXECUTED' as const,
    stepName: step.name,
    eventData: { duration_ms: durationMs, kind: step.type },
  };
  let events: WorkflowEvent[];
  let state = before;
  const audit: Transition['plan']['audit'] = [];
  let failure: SaffronError | undefined;
  let group: string | undefined;
  switch (outcome.kind) {
    case 'completed':
      events = [wfEvents.stepCompleted(step.name, compensation)];
      state = outcome.state;
      audit.push(stepExecuted);
      break;
    case 'jumped':
      if (current.live.compiled.keyOf(outcome.target) === undefined) {
        failure = new StepError(
          'JUMP_TARGET_UNKNOWN',
          step.name,
          `step ${step.name} jumped to '${outcome.target}', which is not a step of ${current.record.workflowType}`,
        );
        events = [];
        break;
      }
      events = [wfEvents.stepJumped(step.name, outcome.target, compensation)];
      state = outcome.state;
      audit.push(stepExecuted, {
        workflowId: id,
        eventType: 'JUMPED',
        stepName: step.name,
        eventData: {
          from: step.name,
          to: outcome.target,
          ...(outcome.missingPaths && { missing_paths: outcome.missingPaths }),
        },
      });
      break;
    case 'paused':
      events = [wfEvents.stepPaused(step.name)];
      state = outcome.state;
      audit.push({
        workflowId: id,
        eventType: 'WORKFLOW_PAUSED',
        stepName: step.name,
        eventData: { reason: 'human_input', ...(outcome.byDefault && { by_default: true }) },
      });
      break;
    case 'subWorkflow':
      events = [wfEvents.childStarted(step.name, outcome.child.id)];
      state = outcome.state;
      outcome.effects.children.push(outcome.child);
      audit.push({
        workflowId: id,
        eventType: 'WORKFLOW_PAUSED',
        stepName: step.name,
        eventData: {
          reason: 'sub_workflow',
          sub_workflow_id: outcome.child.id,
          sub_workflow_type: outcome.child.workflowType,
        },
      });
      break;
    case 'retry':
      events = [wfEvents.stepRetry(step.name, outcome.dueAt, outcome.attempt)];
      audit.push({
        workflowId: id,
        eventType: 'STEP_FAILED',
        stepName: step.name,
        eventData: {
          error: errorInfo(outcome.error, step.name),
          attempt: outcome.attempt,
          retry_at: outcome.dueAt.toISOString(),
        },
      });
      break;
    case 'dispatch': {
      group = `${step.name}:${workflowContext(current.live).visits[current.live.compiled.keyOf(step.name)!] ?? 1}`;
      events = [wfEvents.tasksDispatched(step.name, group)];
      state = outcome.state;
      audit.push({
        workflowId: id,
        eventType: 'TASK_DISPATCHED',
        stepName: step.name,
        eventData: { group, tasks: outcome.tasks.map((t) => t.name) },
      });
      break;
    }
    case 'failed':
      failure = outcome.error;
      events = [];
      break;
  }
  if (failure) {
    events = [wfEvents.stepFailed(step.name, errorInfo(failure, step.name))];
    state = before;
    audit.push({
      workflowId: id,
      eventType: 'STEP_FAILED',
      stepName: step.name,
      eventData: { error: errorInfo(failure, step.name), duration_ms: durationMs },
    });
  }
  const continues =
    !failure &&
    (outcome.kind === 'retry' ||
      ((outcome.kind === 'completed' || outcome.kind === 'jumped') &&
        automateNext(step, current.live)));
  const t = buildTransition(internals, current, events, state, outcome.effects, continues);
  t.plan.audit.push(...audit);
  if (outcome.kind === 'dispatch' && group !== undefined) {
    t.plan.tasks.push(...taskRows(internals, current, step, outcome.tasks, outcome.state, group));
    if (outcome.timeoutAt) {
      t.plan.timers.push({
        id: internals.ids.uuid(),
        workflowId: id,
        kind: 'PARALLEL_TIMEOUT',
        stepName: step.name,
        dueAt: outcome.timeoutAt,
        payload: { group, seconds: step.type === 'PARALLEL' ? step.timeout_seconds : undefined },
      });
    }
  }
  if (outcome.kind === 'retry') {
    t.plan.timers.push({
      id: internals.ids.uuid(),
      workflowId: id,
      kind: 'STEP_RETRY',
      stepName: step.name,
      dueAt: outcome.dueAt,
      payload: { attempt: outcome.attempt },
    });
  }
  if (
    outcome.kind === 'paused' &&
    step.type === 'HUMAN_IN_LOOP' &&
    step.timeout_seconds !== undefined
  ) {
    t.plan.timers.push({
      id: internals.ids.uuid(),
      workflowId: id,
      kind: 'HUMAN_INPUT_TIMEOUT',
      stepName: step.name,
      dueAt: new Date(internals.clock.now().getTime() + step.timeout_seconds * 1000),
      payload: { seconds: step.timeout_seconds },
    });
  }
  if (workflowContext(current.live).retryAt !== null)
    t.plan.settleTimers.unshift({ status: 'FIRED', stepName: step.name });
  t.plan.metrics.push({
    workflowId: id,
    workflowType: current.record.workflowType,
    stepName: step.name,
    name: 'step_duration_ms',
    value: durationMs,
    unit: 'ms',
    tags: { kind: step.type, outcome: failure ? 'failed' : outcome.kind },
  });
  finishAudit(t, id);
  return t;
}

/** Audit rows for reaching a terminal status. */
export function finishAudit(t: Transition, id: string): void {
  const ctx = workflowContext(t.next);
  if (t.status === 'COMPLETED')
    t.plan.audit.push({ workflowId: id, eventType: 'WORKFLOW_COMPLETED' });
  if (t.status === 'FAILED' && workflowPosition(t.next).key === 'failed')
    t.plan.audit.push({
      workflowId: id,
      eventType: 'WORKFLOW_FAILED',
      eventData: { error: ctx.error },
    });
  if (t.status === 'FAILED_ROLLED_BACK')
    t.plan.audit.push({
      workflowId: id,
      eventType: 'WORKFLOW_FAILED',
      eventData: { error: ctx.error, rolled_back: true },
    });
}

/** A human-input deadline with `on_timeout: fail`: the waiting step fails (saga applies). */
export function deadlineFailure(
  internals: Internals,
  current: LiveWorkflow,
  step: StepDefinition & { type: 'HUMAN_IN_LOOP' },
): Transition {
  const error = new StepError(
    'HUMAN_INPUT_TIMEOUT',
    step.name,
    `no human input for step ${step.name} within ${String(step.timeout_seconds)} s`,
  );
  const t = buildTransition(
    internals,
    current,
    [wfEvents.stepFailed(step.name, errorInfo(error, step.name))],
    current.record.state,
    undefined,
  );
  t.plan.audit.push({
    workflowId: current.record.id,
    eventType: 'STEP_FAILED',
    stepName: step.name,
    eventData: { error: errorInfo(error, step.name) },
  });
  finishAudit(t, current.record.id);
  return t;
}
