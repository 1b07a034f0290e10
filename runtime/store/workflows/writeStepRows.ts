/**
 * The side rows of step writes — what goes beside the workflow row — written per kind for a
 * whole batch, so a batch costs a handful of statements however many workflows it carries.
 */
import { appendAuditEvents } from '../audit/appendAuditEvents.js';
import { beatHeartbeats, deleteHeartbeats } from '../heartbeats/beatHeartbeats.js';
import { appendStepLogs } from '../observations/appendStepLogs.js';
import { recordMetrics } from '../observations/recordMetrics.js';
import type { StoreHandle } from '../store.js';
import type { StepWrite } from './stepWrite.js';

/**
 * Write the rows that accompany the workflow row changes of `writes` — audit, metrics, logs
 * and heartbeats — one multi-row statement per kind. Call it in the transaction that changed
 * the workflow rows, with only the writes whose change was applied.
 */
export async function writeStepRows(h: StoreHandle, writes: readonly StepWrite[]): Promise<void> {
  await appendAuditEvents(
    h,
    writes.flatMap((x) => x.audit),
  );
  await recordMetrics(
    h,
    writes.flatMap((x) => x.metrics),
  );
  await appendStepLogs(
    h,
    writes.flatMap((x) => x.logs),
  );
  await beatHeartbeats(
    h,
    writes.flatMap((x) => (typeof x.heartbeat === 'object' ? [x.heartbeat] : [])),
  );
  await deleteHeartbeats(
    h,
    writes.filter((x) => x.heartbeat === 'delete').map((x) => x.update.id),
  );
}
