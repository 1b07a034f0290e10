import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { BROADCAST_COLUMNS, rowToBroadcast, type BroadcastRecord } from './broadcast.js';

/**
 * Lock the broadcast row for this transaction (FOR UPDATE): only the gateway holding the
 * lock drives the broadcast's phases. With `skipLocked` a row another gateway is driving is
 * not waited for: undefined, as for a missing broadcast.
 */
export async function lockBroadcast(
  h: CloudHandle,
  broadcastId: string,
  options: { skipLocked?: boolean } = {},
): Promise<BroadcastRecord | undefined> {
  try {
    let query = h.cloud
      .selectFrom('command_broadcasts')
      .select(BROADCAST_COLUMNS)
      .where('broadcast_id', '=', broadcastId)
      .forUpdate();
    if (options.skipLocked) query = query.skipLocked();
    const row = await query.executeTakeFirst();
    return row ? rowToBroadcast(h.codec, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `lock broadcast ${broadcastId}`);
  }
}
