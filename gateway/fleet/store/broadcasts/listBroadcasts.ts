import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { BROADCAST_COLUMNS, rowToBroadcast, type BroadcastRecord } from './broadcast.js';

/** Filters and paging of {@link listBroadcasts}. */
export interface BroadcastFilter {
  status?: string;
  /** Page size (default 50, at most 500). */
  limit?: number;
  /** Keyset paging: broadcasts created before this one (newest first). */
  before?: { createdAt: Date; broadcastId: string };
}

/** Broadcasts, newest first, with their snapshots. */
export async function listBroadcasts(
  h: CloudHandle,
  filter: BroadcastFilter = {},
): Promise<BroadcastRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), 500);
  let query = h.cloud.selectFrom('command_broadcasts').select(BROADCAST_COLUMNS);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.before) {
    const at = h.codec.time(filter.before.createdAt);
    const id = filter.before.broadcastId;
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '<', at),
        eb.and([eb('created_at', '=', at), eb('broadcast_id', '<', id)]),
      ]),
    );
  }
  try {
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('broadcast_id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => rowToBroadcast(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list broadcasts');
  }
}

/**
 * Ids of unfinished broadcasts (PENDING, IN_PROGRESS, WAITING_NEXT_PHASE, HALTED), oldest
 * first, at most `limit`: the phase driver moves the first three and keeps the counts of
 * HALTED ones current while they wait for an operator.
 */
export async function listActiveBroadcastIds(h: CloudHandle, limit = 500): Promise<string[]> {
  try {
    const rows = await h.cloud
      .selectFrom('command_broadcasts')
      .select('broadcast_id')
      .where('status', 'in', ['PENDING', 'IN_PROGRESS', 'WAITING_NEXT_PHASE', 'HALTED'])
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.broadcast_id);
  } catch (error) {
    throw translateDriverError(error, 'list active broadcasts');
  }
}
