/**
 * Commit plans: what one transition of one workflow changes — its row (version-checked, or
 * inserted at its creation), audit rows, metrics, step logs, heartbeat, and the outbox: child
 * workflows, cron registrations, timers, tasks, compensation records, the embedder's rows —
 * computed and not yet written (planTransition.ts builds them, writePlans.ts writes them in
 * one transaction, docs/architecture.md#durability). Here: the plan's shape and what can be
 * told from a plan alone — whether it is a plain step write, whether the group commit may
 * hold it (groupCommitQueue.ts), the version it leaves, and the folding of a held creation
 * with the plans that follow it.
 */
import type {
  AuditEvent,
  CompensationEntry,
  Heartbeat,
  NewTask,
  NewTimer,
  NewWorkflow,
  NewWorkflowRow,
  ScheduledWorkflow,
  StepLog,
  StepWrite,
  StoreHandle,
  WorkflowMetric,
  WorkflowRowUpdate,
  WorkflowStatus,
} from '../../runtime/index.js';
import type { WorkflowEvent } from '../workflow/events.js';

/** What one transition of one workflow writes, in one transaction with it. */
export interface CommitPlan {
  workflowId: string;
  /**
   * A workflow created by this commit (start): inserted instead of updated, at version 0 or
   * at the version of the last commit folded into it ({@link foldPlans}).
   */
  created?: NewWorkflowRow;
  expectedVersion: number;
  /** The workflow's status at `expectedVersion` (see {@link WorkflowRowUpdate.statusBefore}). */
  statusBefore?: WorkflowStatus;
  row: Omit<WorkflowRowUpdate, 'id' | 'expectedVersion' | 'statusBefore'>;
  audit: AuditEvent[];
  metrics: WorkflowMetric[];
  logs: StepLog[];
  children: NewWorkflow[];
  schedules: ScheduledWorkflow[];
  timers: NewTimer[];
  /** Heartbeats of child workflows this node will drive (a crash before it does leaves them to the zombie scanner). */
  childBeats: Heartbeat[];
  /** Tasks queued by an ASYNC or PARALLEL step (inserted in one statement). */
  tasks: NewTask[];
  /** Settle this workflow's pending timers (all, or one step's), in order. */
  settleTimers: { status: 'FIRED' | 'CANCELLED'; stepName?: string }[];
  compensations: CompensationEntry[];
  /** Rows the embedder writes with this commit (see `RuntimeOptions.onSettled`). */
  outbox: ((tx: StoreHandle) => Promise<void>)[];
  /** Refresh the owner's heartbeat, remove it (waiting or ended), or leave it. */
  heartbeat: { workerId: string; currentStep: string | null; at: Date } | 'delete' | 'keep';
  /** The machine events this commit's transition took, in order (told to an inspector once written). */
  events?: readonly WorkflowEvent[];
}

/**
 * A plan that writes only its workflow's row, audit, metrics, logs and own heartbeat: a plain
 * {@link StepWrite} ({@link toStepWrite}).
 */
export const isStepOnly = (p: CommitPlan) =>
  !p.children.length &&
  !p.tasks.length &&
  !p.childBeats.length &&
  !p.schedules.length &&
  !p.timers.length &&
  !p.settleTimers.length &&
  !p.compensations.length &&
  !p.outbox.length;

/**
 * A plan that continues a running workflow and writes only its own rows: not its creation,
 * not its end or a wait, nothing another process, a timer or the embedder's outbox acts on.
 * Such commits may be held and written with the next one (groupCommitQueue.ts, durability
 * `boundaries`).
 */
export const isIntermediateStep = (p: CommitPlan) =>
  !p.created && p.row.status === 'ACTIVE' && isStepOnly(p);

/**
 * The commit that creates a workflow this node drives at once (it carries this node's
 * heartbeat), with no idempotency key, and writes nothing else: nobody can know the workflow
 * before the drive that follows answers, and that answer flushes it. Such a creation may be
 * held like an intermediate step. A start with an idempotency key is written at once, so that
 * a duplicate fails before any of its steps runs.
 */
export const isDrivenCreation = (p: CommitPlan) =>
  p.created !== undefined &&
  p.created.idempotencyKey == null &&
  typeof p.heartbeat === 'object' &&
  isStepOnly(p);

/** A commit that `boundaries` may hold: an intermediate step or a driven creation. */
export const isHoldable = (p: CommitPlan) => isIntermediateStep(p) || isDrivenCreation(p);

/** The store's step write of a {@link isStepOnly} plan (the rest of the plan is left out). */
export function toStepWrite(p: CommitPlan): StepWrite {
  return {
    update: rowUpdate(p),
    ...(p.created ? { create: p.created } : {}),
    audit: p.audit,
    metrics: p.metrics,
    logs: p.logs,
    heartbeat:
      typeof p.heartbeat === 'object'
        ? {
            workflowId: p.workflowId,
            workerId: p.heartbeat.workerId,
            currentStep: p.heartbeat.currentStep,
            stepStartedAt: p.heartbeat.at,
            at: p.heartbeat.at,
          }
        : p.heartbeat,
  };
}

/** The version-checked row update of a plan that does not create its workflow. */
export const rowUpdate = (p: CommitPlan): WorkflowRowUpdate => ({
  id: p.workflowId,
  expectedVersion: p.expectedVersion,
  ...(p.statusBefore !== undefined && { statusBefore: p.statusBefore }),
  ...p.row,
});

/** The workflow's version once `p` is written. */
export const versionAfter = (p: CommitPlan): number =>
  p.created ? (p.created.version ?? 0) : p.expectedVersion + 1;

/**
 * One plan for a workflow's creation and the commits that followed it, none of them written
 * yet (groupCommitQueue.ts, durability `boundaries`): the row is inserted once, as the last
 * of them leaves it and at its version, with every plan's audit, metric and log rows and
 * outbox in order. A heartbeat the last one removes is never written: no row can hold one
 * yet. Undefined unless `plans` start with the creation and each of the rest follows the one
 * before it.
 */
export function foldPlans(plans: readonly CommitPlan[], now: Date): CommitPlan | undefined {
  const [first, ...rest] = plans;
  if (!first?.created || rest.length === 0) return undefined;
  let version = versionAfter(first);
  for (const p of rest) {
    if (p.created || p.workflowId !== first.workflowId || p.expectedVersion !== version)
      return undefined;
    version = p.expectedVersion + 1;
  }
  const last = rest.at(-1)!;
  const beat = plans.map((p) => p.heartbeat).findLast((h) => h !== 'keep') ?? 'keep';
  const all = <K extends keyof CommitPlan>(key: K) =>
    plans.flatMap((p) => p[key] as unknown[]) as CommitPlan[K];
  return {
    workflowId: first.workflowId,
    created: { ...first.created, ...last.row, version, updatedAt: now },
    expectedVersion: version,
    row: last.row,
    audit: all('audit'),
    metrics: all('metrics'),
    logs: all('logs'),
    children: all('children'),
    schedules: all('schedules'),
    timers: all('timers'),
    childBeats: all('childBeats'),
    tasks: all('tasks'),
    settleTimers: all('settleTimers'),
    compensations: all('compensations'),
    outbox: all('outbox'),
    heartbeat: beat === 'delete' ? 'keep' : beat,
  };
}

/** A plan that changes the workflow row and nothing else yet. */
export function newPlan(
  workflowId: string,
  expectedVersion: number,
  row: CommitPlan['row'],
  heartbeat: CommitPlan['heartbeat'],
): CommitPlan {
  return {
    workflowId,
    expectedVersion,
    row,
    audit: [],
    metrics: [],
    logs: [],
    children: [],
    schedules: [],
    timers: [],
    tasks: [],
    childBeats: [],
    settleTimers: [],
    compensations: [],
    outbox: [],
    heartbeat,
  };
}
