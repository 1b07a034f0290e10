import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** One device's outcome in a broadcast. */
export interface BroadcastDeviceOutcome {
  deviceId: string;
  commandId: string;
  phase: number;
  status: string;
  retryCount: number;
  error: string | null;
  result: unknown;
  deliveredAt: Date | null;
  executedAt: Date | null;
}

/** Filters and paging of {@link listBroadcastDevices}. */
export interface BroadcastDeviceFilter {
  status?: string;
  phase?: number;
  /** Page size (default 100, at most 1000). */
  limit?: number;
  /** Keyset paging: devices whose id sorts after this one. */
  after?: string;
}

const time = (h: CloudHandle, raw: unknown) =>
  raw === null || raw === undefined ? null : h.codec.parseTime(raw);

/** The devices broadcast `broadcastId` has sent its command to, by device id. */
export async function listBroadcastDevices(
  h: CloudHandle,
  broadcastId: string,
  filter: BroadcastDeviceFilter = {},
): Promise<BroadcastDeviceOutcome[]> {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 1000);
  let query = h.cloud
    .selectFrom('device_commands')
    .select([
      'device_id',
      'command_id',
      'batch_sequence',
      'status',
      'retry_count',
      'error',
      'result',
      'delivered_at',
      'executed_at',
    ])
    .where('broadcast_id', '=', broadcastId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.phase !== undefined) query = query.where('batch_sequence', '=', filter.phase);
  if (filter.after !== undefined) query = query.where('device_id', '>', filter.after);
  try {
    const rows = await query.orderBy('device_id').limit(limit).execute();
    return rows.map((r) => ({
      deviceId: r.device_id,
      commandId: r.command_id,
      phase: r.batch_sequence ?? 0,
      status: r.status,
      retryCount: h.codec.parseInt(r.retry_count),
      error: r.error,
      result: r.result === null ? null : h.codec.parseJson(r.result),
      deliveredAt: time(h, r.delivered_at),
      executedAt: time(h, r.executed_at),
    }));
  } catch (error) {
    throw translateDriverError(error, `list devices of broadcast ${broadcastId}`);
  }
}
