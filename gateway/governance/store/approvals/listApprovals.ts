import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToApproval, type ApprovalRecord } from './approval.js';

/** Filters of {@link listApprovals}. */
export interface ApprovalFilter {
  status?: string;
  /** Only approvals requested by this operator name. */
  requestedBy?: string;
  /** Keyset page: approvals created before this one (newest first). */
  before?: { createdAt: Date; approvalId: string };
  /** Page size (default 50, at most 500). */
  limit?: number;
}

/** Approvals, newest first, with their responses. */
export async function listApprovals(
  h: CloudHandle,
  filter: ApprovalFilter = {},
): Promise<ApprovalRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  try {
    let query = h.cloud.selectFrom('command_approvals').selectAll();
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    if (filter.requestedBy !== undefined)
      query = query.where('requested_by', '=', filter.requestedBy);
    const before = filter.before;
    if (before) {
      const at = h.codec.time(before.createdAt);
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '<', at),
          eb.and([eb('created_at', '=', at), eb('approval_id', '<', before.approvalId)]),
        ]),
      );
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('approval_id', 'desc')
      .limit(limit)
      .execute();
    const ids = rows.map((r) => r.approval_id);
    const responses =
      ids.length === 0
        ? []
        : await h.cloud
            .selectFrom('approval_responses')
            .selectAll()
            .where('approval_id', 'in', ids)
            .execute();
    return rows.map((row) => rowToApproval(h.codec, row, responses));
  } catch (error) {
    throw translateDriverError(error, 'list approvals');
  }
}
