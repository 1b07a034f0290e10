import type { WorkflowStatus } from '../../model/statuses.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';
import { rowToWorkflow, type WorkflowRecord } from './record.js';

/** Filters and paging of {@link listWorkflows}. */
export interface WorkflowFilter {
  status?: WorkflowStatus;
  workflowType?: string;
  parentWorkflowId?: string;
  ownerId?: string;
  /** Page size (default 100, at most 1000). */
  limit?: number;
  /** Return workflows created before this one (keyset paging by created_at, id). */
  before?: { createdAt: Date; id: string };
}

/** Workflows matching `filter`, newest first. */
export async function listWorkflows(
  h: StoreHandle,
  filter: WorkflowFilter = {},
): Promise<WorkflowRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
  let query = h.db.selectFrom('workflow_executions').selectAll();
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.workflowType) query = query.where('workflow_type', '=', filter.workflowType);
  if (filter.ownerId) query = query.where('owner_id', '=', filter.ownerId);
  if (filter.parentWorkflowId)
    query = query.where('parent_workflow_id', '=', filter.parentWorkflowId);
  if (filter.before) {
    const at = h.codec.time(filter.before.createdAt);
    const id = filter.before.id;
    query = query.where((eb) =>
      eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', id)])]),
    );
  }
  try {
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => rowToWorkflow(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list workflows');
  }
}
