/**
 * What executing one step produced, as data: the engine turns an outcome into a machine
 * event and a commit (state, audit rows, outbox) without running anything else.
 */
import type { SaffronError } from '../errors.js';
import type { JsonObject } from '../model/json.js';
import type { AuditEvent } from '../store/audit/appendAuditEvents.js';
import type { StepLog } from '../store/observations/appendStepLogs.js';

/** A workflow to create in the step's commit (FIRE_AND_FORGET or a sub-workflow). */
export interface ChildWorkflowSpec {
  /** The child's id, chosen when the step runs so the parent can record it. */
  id: string;
  workflowType: string;
  initialData: JsonObject;
  /** Sub-workflows link back to the parent; spawned workflows are independent. */
  parent: boolean;
  /** The step that started it. */
  stepName: string;
}

/** A cron registration to upsert in the step's commit (CRON_SCHEDULE). */
export interface ScheduleSpec {
  scheduleName: string;
  cronExpression: string;
  targetWorkflowType: string;
  initialData: JsonObject;
  nextRunAt: Date | null;
}

/** A task an ASYNC or PARALLEL step queues for a worker. */
export interface TaskSpec {
  /** The task's name (PARALLEL `tasks[].name`; the step name for ASYNC). */
  name: string;
  functionPath: string;
}

/** Side outputs any outcome may carry; all are written in the step's commit. */
export interface StepEffects {
  children: ChildWorkflowSpec[];
  schedules: ScheduleSpec[];
  logs: Omit<StepLog, 'workflowId'>[];
  audit: Omit<AuditEvent, 'workflowId'>[];
}

/** The result of executing a step once. */
export type StepOutcome = (
  | { kind: 'completed'; state: JsonObject }
  /** `missingPaths`: paths a DECISION's conditions read that were not there. */
  | { kind: 'jumped'; target: string; state: JsonObject; missingPaths?: string[] }
  /** `byDefault`: a HUMAN_IN_LOOP step that returned on its first run, waiting anyway. */
  | { kind: 'paused'; state: JsonObject; byDefault?: true }
  | { kind: 'subWorkflow'; state: JsonObject; child: ChildWorkflowSpec }
  | { kind: 'retry'; state: JsonObject; dueAt: Date; attempt: number; error: SaffronError }
  | { kind: 'dispatch'; state: JsonObject; tasks: TaskSpec[]; timeoutAt?: Date }
  | { kind: 'failed'; error: SaffronError }
) & { effects: StepEffects; durationMs: number };

/** Empty effects. */
export function noEffects(): StepEffects {
  return { children: [], schedules: [], logs: [], audit: [] };
}
