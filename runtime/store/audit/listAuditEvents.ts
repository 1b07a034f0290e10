import type { AuditEventType } from '../../model/statuses.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A stored audit event. */
export interface StoredAuditEvent {
  id: number;
  workflowId: string;
  eventType: AuditEventType;
  stepName: string | null;
  eventData: Record<string, unknown>;
  timestamp: Date;
}

/** The audit trail of one workflow, oldest first. */
export async function listAuditEvents(
  h: StoreHandle,
  workflowId: string,
): Promise<StoredAuditEvent[]> {
  try {
    const rows = await h.db
      .selectFrom('workflow_audit_log')
      .selectAll()
      .where('workflow_id', '=', workflowId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      workflowId: r.workflow_id,
      eventType: r.event_type as AuditEventType,
      stepName: r.step_name,
      eventData: h.codec.parseJson(r.event_data) as Record<string, unknown>,
      timestamp: h.codec.parseTime(r.timestamp),
    }));
  } catch (error) {
    throw translateDriverError(error, `list audit events of ${workflowId}`);
  }
}
