/**
 * Driving a workflow: run its current step, commit the result, and go on while the workflow
 * is ACTIVE and the step says `automate_next` (docs/architecture.md#statuses). Also settles the two kinds of
 * waiting that end without a step run: a sub-workflow that finished, and saga compensations.
 *
 * Durability: nothing a step does is visible until its commit; a crash anywhere before the
 * commit leaves the workflow at its last committed step, which runs again (at least once,
 * with the same idempotency key); a crash after the commit repeats nothing.
 */
import {
  executeStep,
  getWorkflow,
  invokeStepFunction,
  mergeState,
  noEffects,
  StepError,
  WorkflowError,
  withSignalAndLog,
  type JsonObject,
  type StepContext,
  type StepDefinition,
  type StepOutcome,
  type WorkflowRecord,
} from '../../runtime/index.js';
import { wfEvents } from '../workflow/events.js';
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
} from './planTransition.js';
import { kickTasks } from './tasks.js';
import { applyChanges, concurrentWave } from './wave.js';
import { deadlineFailure, errorInfo, finishAudit, outcomeTransition } from './outcome.js';

/** Why a workflow is being driven. */
export type DriveRequest =
  | { kind: 'start' }
  | { kind: 'next'; input?: JsonObject }
  | { kind: 'resume'; input: JsonObject }
  | { kind: 'continue' }
  | { kind: 'child-done' }
  /** The human-input deadline of `stepName` passed (a fired HUMAN_INPUT_TIMEOUT timer). */
  | { kind: 'deadline'; stepName: string };

/** Load a workflow or fail with WORKFLOW_NOT_FOUND. */
export async function loadWorkflow(internals: Internals, id: string): Promise<WorkflowRecord> {
  const record = await getWorkflow(internals.store, id);
  if (!record)
    throw new WorkflowError('WORKFLOW_NOT_FOUND', `workflow ${id} does not exist`, {
      details: { workflowId: id },
    });
  return record;
}

/** Commit a transition, then start the background work it implies. Returns the updated live workflow. */
async function commit(
  internals: Internals,
  current: LiveWorkflow,
  t: Transition,
  stepName: string,
): Promise<LiveWorkflow> {
  const now = internals.clock.now();
  await fault(internals, 'before-commit', current.record.id, stepName);
  const version = await internals.groupCommit.commit(t.plan, now);
  await fault(internals, 'after-commit', current.record.id, stepName);
  const record: WorkflowRecord = {
    ...current.record,
    ...t.plan.row,
    state: t.state,
    status: t.status,
    version,
    updatedAt: now,
  };
  if (t.plan.tasks.length > 0) kickTasks(internals, current.record.id);
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
  ahead = false,
): StepContext {
  const ctx = workflowContext(current.live);
  const key = current.live.compiled.keyOf(step.name)!;
  // a step run ahead in a wave gets the visit and attempt it will have when reached
  const visit = ahead ? (ctx.visits[key] ?? 0) + 1 : (ctx.visits[key] ?? 1);
  return withSignalAndLog(
    {
      workflowId: current.record.id,
      workflowType: current.record.workflowType,
      stepName: step.name,
      attempt: ahead ? 1 : ctx.attempt + 1,
      idempotencyKey: `${current.record.id}:${step.name}:${visit}`,
      ...(input ? { input } : {}),
      secrets: internals.secrets,
    },
    effects,
    step.name,
  );
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
  const context: StepContext = withSignalAndLog(
    {
      workflowId: id,
      workflowType: current.record.workflowType,
      stepName: entry.step,
      attempt: 1,
      idempotencyKey: `${id}:compensate:${entry.step}:${ctx.saga.length}`,
      secrets: internals.secrets,
      compensating: true,
      error: ctx.error,
    },
    effects,
    entry.step,
  );
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

/** Run one step of `current` on `before` (its working copy) and return the outcome. */
async function runStep(
  internals: Internals,
  current: LiveWorkflow,
  step: StepDefinition,
  before: JsonObject,
  input: JsonObject | undefined,
  ahead: boolean,
): Promise<StepOutcome> {
  const effects = noEffects();
  const context = stepContext(internals, current, step, input, effects, ahead);
  await fault(internals, 'before-step', current.record.id, step.name);
  return executeStep(step, {
    definition: current.live.compiled.definition,
    state: before,
    context,
    effects,
    executor: internals.executor,
    clock: internals.clock,
    ids: internals.ids,
    secrets: internals.secrets,
    destinations: internals.destinations,
    attempt: ahead ? 0 : workflowContext(current.live).attempt,
    knowsWorkflowType: (type) => internals.registry.get(type) !== undefined,
    inference: internals.inference,
    wasm: internals.wasm,
  });
}

/**
 * Leave WAITING_HUMAN_INPUT: the resume and the step run it triggers are one commit, so the
 * event is applied up front and its audit row (and the deadline's cancellation) ride along.
 */
function resumeHuman(
  current: LiveWorkflow,
  reason: 'human_input' | 'human_input_timeout',
  audit: Transition['plan']['audit'],
  settle: Transition['plan']['settleTimers'],
): LiveWorkflow {
  const stepName = current.record.currentStep;
  audit.push({
    workflowId: current.record.id,
    eventType: 'WORKFLOW_RESUMED',
    stepName,
    eventData: { reason },
  });
  if (stepName) settle.push({ status: 'CANCELLED', stepName });
  return {
    record: current.record,
    live: nextWorkflowSnapshot(current.live, wfEvents.humanResumed()),
  };
}

/** Drive workflow `id` for `request`; returns the workflow as last committed. */
export function driveWorkflow(
  internals: Internals,
  id: string,
  request: DriveRequest,
  preloaded?: WorkflowRecord,
): Promise<WorkflowRecord> {
  return internals.exclusive(id, async () => {
    internals.driving.add(id);
    let record: WorkflowRecord;
    try {
      record = await driveLoop(internals, id, request, preloaded);
    } catch (error) {
      // what the drive held is still its progress; its own failure is what the caller hears
      await internals.groupCommit.release(id).catch(() => undefined);
      throw error;
    } finally {
      internals.driving.delete(id);
    }
    // the caller is about to see `record`: what it holds is written and flushed first
    await internals.groupCommit.release(id);
    return record;
  });
}

/** The body of {@link driveWorkflow}, run while holding the workflow. */
async function driveLoop(
  internals: Internals,
  id: string,
  request: DriveRequest,
  preloaded: WorkflowRecord | undefined,
): Promise<WorkflowRecord> {
  let current = restoreLive(internals, preloaded ?? (await loadWorkflow(internals, id)));
  const status = workflowStatus(current.live);
  let input: JsonObject | undefined;
  // rows the first commit of this drive carries besides its step's own
  const preludeAudit: Transition['plan']['audit'] = [];
  const preludeSettle: Transition['plan']['settleTimers'] = [];
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
      current = resumeHuman(current, 'human_input', preludeAudit, preludeSettle);
      break;
    case 'deadline': {
      const waiting = current.live.compiled.stepAt(workflowPosition(current.live).key)?.step;
      if (
        status !== 'WAITING_HUMAN_INPUT' ||
        waiting?.name !== request.stepName ||
        waiting.type !== 'HUMAN_IN_LOOP'
      )
        return current.record; // answered, cancelled or moved on meanwhile
      if (waiting.on_timeout === 'resume') {
        input = { ...waiting.timeout_input, human_input_timed_out: true };
        current = resumeHuman(current, 'human_input_timeout', preludeAudit, preludeSettle);
        break;
      }
      current = await commit(
        internals,
        current,
        deadlineFailure(internals, current, waiting),
        waiting.name,
      );
      advance = false;
      break;
    }
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
    const wave =
      input === undefined && ctx.retryAt === null
        ? concurrentWave(current.live.compiled.definition.steps, at.index, (s) =>
            automateNext(s, current.live),
          )
        : [step];
    const ran = await Promise.all(
      wave.map((s, k) =>
        runStep(internals, current, s, before, k === 0 ? input : undefined, k > 0),
      ),
    );
    input = undefined;
    for (const [k, s] of wave.entries()) {
      let outcome = ran[k]!;
      const base = current.record.state;
      if (k > 0 && outcome.kind === 'completed')
        outcome = { ...outcome, state: applyChanges(base, before, outcome.state) };
      const t = outcomeTransition(internals, current, s, outcome, k === 0 ? before : base);
      t.plan.audit.unshift(...preludeAudit.splice(0));
      t.plan.settleTimers.unshift(...preludeSettle.splice(0));
      current = await commit(internals, current, t, s.name);
      advance =
        outcome.kind === 'retry' ||
        ((outcome.kind === 'completed' || outcome.kind === 'jumped') && automateNext(s, t.next));
      if (outcome.kind !== 'completed' || !advance) break;
    }
  }
  return current.record;
}
