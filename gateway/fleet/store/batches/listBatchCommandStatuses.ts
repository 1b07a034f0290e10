import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** The status of every command batch `batchId` has created, by command id. */
export async function listBatchCommandStatuses(
  h: CloudHandle,
  batchId: string,
): Promise<Map<string, string>> {
  try {
    const rows = await h.cloud
      .selectFrom('device_commands')
      .select(['command_id', 'status'])
      .where('batch_id', '=', batchId)
      .execute();
    return new Map(rows.map((r) => [r.command_id, r.status]));
  } catch (error) {
    throw translateDriverError(error, `list commands of batch ${batchId}`);
  }
}
