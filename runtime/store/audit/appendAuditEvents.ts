import type { AuditEventType } from '../../model/statuses.js';
import { executeCachedRows } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** One workflow_audit_log event. */
export interface AuditEvent {
  workflowId: string;
  eventType: AuditEventType;
  stepName?: string | null;
  eventData?: Record<string, unknown>;
  timestamp?: Date;
}

/** Append audit events in one statement (a step commit usually writes several). */
export async function appendAuditEvents(
  h: StoreHandle,
  events: readonly AuditEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const now = new Date();
  const rows = events.map((e) => ({
    workflow_id: e.workflowId,
    event_type: e.eventType,
    step_name: e.stepName ?? null,
    event_data: h.codec.json(e.eventData ?? {}),
    timestamp: h.codec.time(e.timestamp ?? now),
  }));
  try {
    await executeCachedRows(h, 'appendAuditEvents', rows, () =>
      h.db.insertInto('workflow_audit_log').values(rows),
    );
  } catch (error) {
    throw translateDriverError(error, 'append audit events');
  }
}
