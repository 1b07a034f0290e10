/** The common shape of a step commit: what most engine commits consist of. */
import type { AuditEvent } from '../audit/appendAuditEvents.js';
import type { Heartbeat } from '../heartbeats/beatHeartbeat.js';
import type { StepLog } from '../observations/appendStepLogs.js';
import type { WorkflowMetric } from '../observations/recordMetrics.js';
import type { NewWorkflowRow } from './record.js';
import type { WorkflowRowUpdate } from './updateWorkflows.js';

/** One workflow's step commit: its row update and the rows that go with it. */
export interface StepCommit {
  update: WorkflowRowUpdate;
  /** Set when the commit creates the workflow (start): the row is inserted, not updated. */
  create?: NewWorkflowRow;
  audit: readonly AuditEvent[];
  metrics: readonly WorkflowMetric[];
  logs: readonly StepLog[];
  heartbeat: Heartbeat | 'delete' | 'keep';
}
