import { appendAuditEvents } from '../audit/appendAuditEvents.js';
import { beatHeartbeats, deleteHeartbeats } from '../heartbeats/beatHeartbeats.js';
import { appendStepLogs } from '../observations/appendStepLogs.js';
import { recordMetrics } from '../observations/recordMetrics.js';
import type { StoreHandle } from '../store.js';
import type { StepCommit } from './stepCommit.js';

/**
 * The rows that accompany workflow row changes in step commits — audit, metrics, logs and
 * heartbeats — one multi-row statement per kind. Call it in the transaction that changed the
 * workflow rows, with only the commits whose change was applied.
 */
export async function writeStepRows(h: StoreHandle, commits: readonly StepCommit[]): Promise<void> {
  await appendAuditEvents(
    h,
    commits.flatMap((x) => x.audit),
  );
  await recordMetrics(
    h,
    commits.flatMap((x) => x.metrics),
  );
  await appendStepLogs(
    h,
    commits.flatMap((x) => x.logs),
  );
  await beatHeartbeats(
    h,
    commits.flatMap((x) => (typeof x.heartbeat === 'object' ? [x.heartbeat] : [])),
  );
  await deleteHeartbeats(
    h,
    commits.filter((x) => x.heartbeat === 'delete').map((x) => x.update.id),
  );
}
