/**
 * Driving a workflow: run its current step, commit the result, and go on while the workflow
 * is ACTIVE and the step says `automate_next` (DESIGN §3.6). Also settles the two kinds of
 * waiting that end without a step run: a sub-workflow that finished, and saga compensations.
 *
 * Durability: nothing a step does is visible until its commit; a crash anywhere before the
 * commit leaves the workflow at its last committed step, which runs again (at least once,
 * with the same idempotency key); a crash after the commit repeats nothing.
 */
import {
  createStepLogger,
  executeStep,
  getWorkflow,
  invokeStepFunction,
  mergeState,
  noEffects,
  StepError,
  WorkflowError,
  type JsonObject,
  type SaffronError,
  type StepContext,
  type StepDefinition,
  type StepOutcome,
  type TaskSpec,
  type NewTask,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { wfEvents, type WorkflowEvent } from '../workflow/events.js';
import {
  nextWorkflowSnapshot,
  workflowContext,
  workflowPosition,
  workflowStatus,
} from '../workflow/snapshot.js';
import { fault, type Internals, type LiveWorkflow, restoreLive } from './internals.js';
import {
  automateNext,
  buildTransition,
  compensationOf,
  isTerminal,
  type Transition,
} from './plan.js';
import { drainTasks } from './tasks.js';

/** Why a workflow is being driven. */
export type DriveRequest =
  | { kind: 'start' }
  | { kind: 'next'; input?: JsonObject }
  | { kind: 'resume'; input: JsonObject }
  | { kind: 'continue' }
  | { kind: 'child-done' };

/** Load a workflow or fail with WORKFLOW_NOT_FOUND. */
export async function loadWorkflow(internals: Internals, id: string): Promise<WorkflowRecord> {
  const record = await getWorkflow(internals.store, id);
  if (!record)
    throw new WorkflowError('WORKFLOW_NOT_FOUND', `workflow ${id} does not exist`, {
      details: { workflowId: id },
    });
  return record;
}

const errorInfo = (error: SaffronError, step: string | null) => ({
  code: error.code,
  message: error.message,
  step,
});

/** Commit a transition, then start the background work it implies. Returns the updated live workflow. */
async function commit(
  internals: Internals,
  current: LiveWorkflow,
  t: Transition,
  stepName: string,
): Promise<LiveWorkflow> {
  const now = internals.clock.now();
  await fault(internals, 'before-commit', current.record.id, stepName);
  const version = await internals.commits.commit(t.plan, now);
  await fault(internals, 'after-commit', current.record.id, stepName);
  const record: WorkflowRecord = {
    ...current.record,
    ...t.plan.row,
    state: t.state,
    status: t.status,
    version,
    updatedAt: now,
  };
  if (internals.runTasks && t.plan.tasks.length > 0) {
    internals.background(current.record.id, () => drainTasks(internals));
  }
  if (internals.driveChildren) {
    for (const child of t.plan.children)
      internals.background(child.id, () => driveWorkflow(internals, child.id, { kind: 'start' }));
    if (isTerminal(t.status) && record.parentWorkflowId) {
      const parent = record.parentWorkflowId;
      internals.background(parent, () => driveWorkflow(internals, parent, { kind: 'child-done' }));
    }
  }
  return { record, live: t.next };
}

function stepContext(
  internals: Internals,
  current: LiveWorkflow,
  step: StepDefinition,
  input: JsonObject | undefined,
  effects: StepOutcome['effects'],
): StepContext {
  const ctx = workflowContext(current.live);
  const key = current.live.compiled.keyOf(step.name)!;
  const visit = ctx.visits[key] ?? 1;
  return {
    workflowId: current.record.id,
    workflowType: current.record.workflowType,
    stepName: step.name,
    attempt: ctx.attempt + 1,
    idempotencyKey: `${current.record.id}:${step.name}:${visit}`,
    ...(input ? { input } : {}),
    signal: new AbortController().signal,
    secrets: internals.secrets,
    log: createStepLogger(effects, step.name),
  };
}

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

/** Turn a step outcome into a transition with its audit rows and metrics. */
function outcomeTransition(
  internals: Internals,
  current: LiveWorkflow,
  step: StepDefinition,
  outcome: StepOutcome,
  before: JsonObject,
): Transition {
  const id = current.record.id;
  const compensation = compensationOf(step);
  const durationMs = Math.round(outcome.durationMs * 1000) / 1000;
  const executed = {
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
      audit.push(executed);
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
      audit.push(executed, {
        workflowId: id,
        eventType: 'JUMPED',
        stepName: step.name,
        eventData: { from: step.name, to: outcome.target },
      });
      break;
    case 'paused':
      events = [wfEvents.stepPaused(step.name)];
      state = outcome.state;
      audit.push({
        workflowId: id,
        eventType: 'WORKFLOW_PAUSED',
        stepName: step.name,
        eventData: { reason: 'human_input' },
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

/** Run the most recently registered compensation and commit its record. */
async function compensateOne(internals: Internals, current: LiveWorkflow): Promise<LiveWorkflow> {
  const id = current.record.id;
  const ctx = workflowContext(current.live);
  const entry = ctx.saga.at(-1);
  if (!entry)
    return commit(
      internals,
      current,
      buildTransition(
        internals,
        current,
        [wfEvents.compensated()],
        current.record.state,
        undefined,
      ),
      'compensation',
    );
  const effects = noEffects();
  const context: StepContext = {
    workflowId: id,
    workflowType: current.record.workflowType,
    stepName: entry.step,
    attempt: 1,
    idempotencyKey: `${id}:compensate:${entry.step}:${ctx.saga.length}`,
    signal: new AbortController().signal,
    secrets: internals.secrets,
    log: createStepLogger(effects, entry.step),
    compensating: true,
    error: ctx.error,
  };
  await fault(internals, 'before-step', id, entry.step);
  const before = current.record.state;
  const result = await invokeStepFunction(internals.executor, entry.fn, before, context);
  const ok = result.kind !== 'threw';
  const after = result.kind === 'threw' ? before : result.state;
  const events = [
    wfEvents.compensationRecorded(),
    ...(ctx.saga.length === 1 ? [wfEvents.compensated()] : []),
  ];
  const t = buildTransition(internals, current, events, after, effects);
  t.plan.compensations.push({
    workflowId: id,
    stepName: entry.step,
    compensationFunction: entry.fn,
    status: ok ? 'COMPLETED' : 'FAILED',
    stateBefore: before,
    stateAfter: after,
    error: result.kind === 'threw' ? result.error.message : null,
  });
  t.plan.audit.push(
    {
      workflowId: id,
      eventType: 'COMPENSATION_STARTED',
      stepName: entry.step,
      eventData: { function: entry.fn },
    },
    ok
      ? {
          workflowId: id,
          eventType: 'COMPENSATION_COMPLETED',
          stepName: entry.step,
          eventData: { function: entry.fn },
        }
      : {
          workflowId: id,
          eventType: 'COMPENSATION_FAILED',
          stepName: entry.step,
          eventData: {
            function: entry.fn,
            error: result.kind === 'threw' ? result.error.message : null,
          },
        },
  );
  finishAudit(t, id);
  return commit(internals, current, t, entry.step);
}

/** A parent waiting for a sub-workflow: take the child's result if it has ended. */
async function settleChild(
  internals: Internals,
  current: LiveWorkflow,
): Promise<{ current: LiveWorkflow; advance: boolean }> {
  const ctx = workflowContext(current.live);
  const at = current.live.compiled.stepAt(workflowPosition(current.live).key);
  if (!ctx.childId || !at) return { current, advance: false };
  const child = await getWorkflow(internals.store, ctx.childId);
  if (!child || !isTerminal(child.status)) return { current, advance: false };
  const id = current.record.id;
  const step = at.step;
  if (child.status === 'COMPLETED') {
    const results = (current.record.state.sub_workflow_results as JsonObject | undefined) ?? {};
    const state = {
      ...current.record.state,
      sub_workflow_results: { ...results, [child.workflowType]: child.state },
    };
    const t = buildTransition(
      internals,
      current,
      [wfEvents.childCompleted(step.name, compensationOf(step))],
      state,
      undefined,
      automateNext(step, current.live),
    );
    t.plan.audit.push(
      {
        workflowId: id,
        eventType: 'WORKFLOW_RESUMED',
        stepName: step.name,
        eventData: { reason: 'sub_workflow_completed', sub_workflow_id: child.id },
      },
      {
        workflowId: id,
        eventType: 'STEP_EXECUTED',
        stepName: step.name,
        eventData: { kind: step.type, sub_workflow_id: child.id },
      },
    );
    finishAudit(t, id);
    return {
      current: await commit(internals, current, t, step.name),
      advance: automateNext(step, current.live),
    };
  }
  const error = new StepError(
    'SUB_WORKFLOW_FAILED',
    step.name,
    `sub-workflow ${child.id} (${child.workflowType}) ended ${child.status}`,
    { details: { sub_workflow_id: child.id } },
  );
  const t = buildTransition(
    internals,
    current,
    [wfEvents.stepFailed(step.name, errorInfo(error, step.name))],
    current.record.state,
    undefined,
  );
  t.plan.audit.push({
    workflowId: id,
    eventType: 'STEP_FAILED',
    stepName: step.name,
    eventData: { error: errorInfo(error, step.name) },
  });
  finishAudit(t, id);
  return { current: await commit(internals, current, t, step.name), advance: false };
}

/** Drive workflow `id` for `request`; returns the workflow as last committed. */
export function driveWorkflow(
  internals: Internals,
  id: string,
  request: DriveRequest,
  preloaded?: WorkflowRecord,
): Promise<WorkflowRecord> {
  return internals.exclusive(id, async () => {
    let current = restoreLive(internals, preloaded ?? (await loadWorkflow(internals, id)));
    const status = workflowStatus(current.live);
    let input: JsonObject | undefined;
    const preludeAudit: Transition['plan']['audit'] = [];
    let advance = true;
    switch (request.kind) {
      case 'next':
        if (status !== 'ACTIVE')
          throw new WorkflowError(
            'WORKFLOW_NOT_ACTIVE',
            `workflow ${id} is ${status}, not ACTIVE; next() runs only ACTIVE workflows`,
            { details: { workflowId: id, status } },
          );
        input = request.input;
        break;
      case 'resume':
        if (status !== 'WAITING_HUMAN_INPUT')
          throw new WorkflowError(
            'WORKFLOW_NOT_WAITING',
            `workflow ${id} is ${status}, not WAITING_HUMAN_INPUT`,
            { details: { workflowId: id, status } },
          );
        input = request.input;
        // the resume and the step run it triggers are one commit: apply the event up front
        current = {
          record: current.record,
          live: nextWorkflowSnapshot(current.live, wfEvents.humanResumed()),
        };
        preludeAudit.push({
          workflowId: id,
          eventType: 'WORKFLOW_RESUMED',
          stepName: current.record.currentStep,
          eventData: { reason: 'human_input' },
        });
        break;
      case 'child-done': {
        if (status !== 'PENDING_SUB_WORKFLOW') return current.record;
        const settled = await settleChild(internals, current);
        current = settled.current;
        advance = settled.advance;
        break;
      }
      case 'start':
      case 'continue':
        break;
    }
    for (;;) {
      const position = workflowPosition(current.live);
      if (position.key === 'compensating') {
        current = await compensateOne(internals, current);
        continue;
      }
      if (workflowStatus(current.live) !== 'ACTIVE' || !advance) break;
      const at = current.live.compiled.stepAt(position.key);
      if (!at) break;
      const step = at.step;
      const ctx = workflowContext(current.live);
      if (ctx.retryAt !== null) {
        const wait = Date.parse(ctx.retryAt) - internals.clock.now().getTime();
        if (wait > 0) await internals.clock.sleep(wait);
      }
      const before = input ? mergeState(current.record.state, input) : current.record.state;
      const effects = noEffects();
      const context = stepContext(internals, current, step, input, effects);
      await fault(internals, 'before-step', id, step.name);
      const outcome = await executeStep(step, {
        definition: current.live.compiled.definition,
        state: before,
        context,
        effects,
        executor: internals.executor,
        clock: internals.clock,
        ids: internals.ids,
        secrets: internals.secrets,
        attempt: ctx.attempt,
        knowsWorkflowType: (type) => internals.registry.get(type) !== undefined,
      });
      const t = outcomeTransition(internals, current, step, outcome, before);
      t.plan.audit.unshift(...preludeAudit.splice(0));
      current = await commit(internals, current, t, step.name);
      input = undefined;
      advance =
        outcome.kind === 'retry' ||
        ((outcome.kind === 'completed' || outcome.kind === 'jumped') && automateNext(step, t.next));
    }
    return current.record;
  });
}
