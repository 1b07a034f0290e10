import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { BROADCAST_COLUMNS, rowToBroadcast, type BroadcastRecord } from './broadcast.js';

/** The broadcast `broadcastId`, or undefined. */
export async function getBroadcast(
  h: CloudHandle,
  broadcastId: string,
): Promise<BroadcastRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('command_broadcasts')
      .select(BROADCAST_COLUMNS)
      .where('broadcast_id', '=', broadcastId)
      .executeTakeFirst();
    return row ? rowToBroadcast(h.codec, row) : undefined;
  } catch (error) {
    throw translateDriverError(error, `get broadcast ${broadcastId}`);
  }
}
