import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { COMMAND_COLUMNS, rowToCommand, type CommandRecord } from './command.js';

/** Which commands to list. */
export interface CommandFilter {
  deviceId: string;
  status?: string;
  limit: number;
}

/** A device's commands, newest first (no changes: the operator's view). */
export async function listCommands(
  h: CloudHandle,
  filter: CommandFilter,
): Promise<CommandRecord[]> {
  try {
    let query = h.cloud
      .selectFrom('device_commands')
      .select(COMMAND_COLUMNS)
      .where('device_id', '=', filter.deviceId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('command_id', 'desc')
      .limit(filter.limit)
      .execute();
    return rows.map((row) => rowToCommand(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, `list commands of device ${filter.deviceId}`);
  }
}
