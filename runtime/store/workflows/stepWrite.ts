/**
 * The store's shape of one workflow's step: the workflow row's change and the rows that go
 * with it. Most engine commits consist of nothing else, so the store writes batches of them
 * in one statement (commitStepWrites.ts); the engine's wider commit plans are built on it.
 */
import type { AuditEvent } from '../audit/appendAuditEvents.js';
import type { Heartbeat } from '../heartbeats/beatHeartbeat.js';
import type { StepLog } from '../observations/appendStepLogs.js';
import type { WorkflowMetric } from '../observations/recordMetrics.js';
import type { NewWorkflowRow } from './record.js';
import type { WorkflowRowUpdate } from './updateWorkflows.js';

/**
 * One workflow's step as the store writes it: the workflow row's version-checked update (or
 * its insert), and the audit, metric, log and heartbeat rows that go with it.
 */
export interface StepWrite {
  update: WorkflowRowUpdate;
  /** Set when the step creates the workflow (start): the row is inserted, not updated. */
  create?: NewWorkflowRow;
  audit: readonly AuditEvent[];
  metrics: readonly WorkflowMetric[];
  logs: readonly StepLog[];
  heartbeat: Heartbeat | 'delete' | 'keep';
}
