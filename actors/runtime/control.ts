/**
 * Operator controls that change a workflow without running a step: cancel, pause, unpause
 * and retry. Each is one commit with its audit row.
 */
import {
  WorkflowError,
  type AuditEventType,
  type JsonObject,
  type WorkflowRecord,
  type WorkflowStatus,
} from '../../runtime/index.js';
import { initialContext, type WorkflowMachineContext } from '../workflow/context.js';
import { wfEvents, type WorkflowEvent } from '../workflow/events.js';
import { workflowContext, workflowStatus, type WorkflowSnapshot } from '../workflow/snapshot.js';
import { commitOnePlan } from './writePlans.js';
import { type Internals, restoreLive } from './internals.js';
import { loadWorkflow } from './drive.js';
import { buildTransition, isTerminal } from './planTransition.js';

/**
 * Apply one operator event in one commit with its audit row. `check` throws when the request
 * does not fit the workflow's status, or returns the record unchanged when there is nothing
 * to do.
 */
function operatorEvent(
  internals: Internals,
  id: string,
  check: (status: WorkflowStatus, record: WorkflowRecord) => WorkflowRecord | undefined,
  event: (status: WorkflowStatus) => WorkflowEvent,
  audit: (
    status: WorkflowStatus,
    next: WorkflowStatus,
  ) => { eventType: AuditEventType; eventData: JsonObject },
): Promise<WorkflowRecord> {
  return internals.exclusive(id, async () => {
    const current = restoreLive(internals, await loadWorkflow(internals, id));
    const status = workflowStatus(current.live);
    const unchanged = check(status, current.record);
    if (unchanged) return unchanged;
    const t = buildTransition(internals, current, [event(status)], current.record.state, undefined);
    t.plan.audit.push({
      workflowId: id,
      stepName: current.record.currentStep,
      ...audit(status, t.status),
    });
    await commitOnePlan(internals.store, t.plan, internals.clock.now());
    return loadWorkflow(internals, id);
  });
}

function notEnded(id: string, status: WorkflowStatus): undefined {
  if (isTerminal(status)) {
    throw new WorkflowError('WORKFLOW_TERMINAL', `workflow ${id} has already ended (${status})`, {
      details: { workflowId: id, status },
    });
  }
  return undefined;
}

/** Cancel a workflow that has not ended. */
export function cancelWorkflow(
  internals: Internals,
  id: string,
  reason?: string,
): Promise<WorkflowRecord> {
  return operatorEvent(
    internals,
    id,
    (status) => notEnded(id, status),
    () => wfEvents.cancelled(),
    (status) => ({
      eventType: 'WORKFLOW_CANCELLED',
      eventData: { previous_status: status, ...(reason ? { reason } : {}) },
    }),
  );
}

/** Operator pause: the workflow keeps its place and runs nothing until unpaused. */
export function pauseWorkflow(internals: Internals, id: string): Promise<WorkflowRecord> {
  return operatorEvent(
    internals,
    id,
    (status, record) => (status === 'PAUSED' ? record : notEnded(id, status)),
    (status) => wfEvents.paused(status),
    (status) => ({
      eventType: 'WORKFLOW_PAUSED',
      eventData: { reason: 'operator', previous_status: status },
    }),
  );
}

/** Undo an operator pause: the workflow returns to the status it had. */
export function unpauseWorkflow(internals: Internals, id: string): Promise<WorkflowRecord> {
  return operatorEvent(
    internals,
    id,
    (status, record) => {
      if (status !== 'PAUSED') {
        throw new WorkflowError(
          'WORKFLOW_NOT_PAUSED',
          `workflow ${id} is ${record.status}, not PAUSED`,
          {
            details: { workflowId: id },
          },
        );
      }
      return undefined;
    },
    () => wfEvents.unpaused(),
    (_status, next) => ({
      eventType: 'WORKFLOW_RESUMED',
      eventData: { reason: 'operator', status: next },
    }),
  );
}

/** Move a failed or cancelled workflow back to ACTIVE at `fromStep` (default: the step that failed). */
export function retryWorkflow(
  internals: Internals,
  id: string,
  fromStep?: string,
  input?: JsonObject,
): Promise<WorkflowRecord> {
  return internals.exclusive(id, async () => {
    const current = restoreLive(internals, await loadWorkflow(internals, id));
    const status = workflowStatus(current.live);
    if (
      !['FAILED', 'FAILED_ROLLED_BACK', 'CANCELLED'].includes(status) ||
      current.live.snapshot.value === 'compensating'
    ) {
      throw new WorkflowError(
        'WORKFLOW_NOT_RETRYABLE',
        `workflow ${id} is ${status}; only FAILED, FAILED_ROLLED_BACK or CANCELLED workflows can be retried`,
        {
          details: { workflowId: id, status },
        },
      );
    }
    const ctx = workflowContext(current.live);
    const compiled = current.live.compiled;
    const target =
      fromStep ??
      ctx.error?.step ??
      current.record.currentStep ??
      compiled.definition.steps[0]!.name;
    const key = compiled.keyOf(target);
    if (key === undefined) {
      const names = compiled.definition.steps.map((s) => s.name).join(', ');
      throw new WorkflowError(
        'UNKNOWN_STEP',
        `workflow ${id} has no top-level step '${target}' (steps: ${names})`,
        { details: { workflowId: id, step: target } },
      );
    }
    const context: WorkflowMachineContext = {
      ...initialContext(),
      saga: status === 'FAILED' ? ctx.saga : [],
      visits: { ...ctx.visits, [key]: (ctx.visits[key] ?? 0) + 1 },
    };
    const live: WorkflowSnapshot = {
      compiled,
      snapshot: compiled.machine.resolveState({ value: { [key]: 'ready' }, context }),
    };
    const state = input ? { ...current.record.state, ...input } : current.record.state;
    const t = buildTransition(
      internals,
      { record: current.record, live },
      [],
      state,
      undefined,
      true,
    );
    t.plan.audit.push({
      workflowId: id,
      eventType: 'WORKFLOW_RETRIED',
      stepName: target,
      eventData: { from_step: target, previous_status: status, previous_error: ctx.error },
    });
    await commitOnePlan(internals.store, t.plan, internals.clock.now());
    return loadWorkflow(internals, id);
  });
}
