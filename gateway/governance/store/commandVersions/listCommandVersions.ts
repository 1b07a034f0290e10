import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_VERSION_COLUMNS,
  rowToCommandVersion,
  type CommandVersionRecord,
} from './commandVersion.js';

/**
 * Every version of the given command types (all types when `commandTypes` is omitted), in
 * registration order. The gateway orders them by semantic version.
 */
export async function listCommandVersions(
  h: CloudHandle,
  commandTypes?: readonly string[],
): Promise<CommandVersionRecord[]> {
  if (commandTypes !== undefined && commandTypes.length === 0) return [];
  try {
    let query = h.cloud.selectFrom('command_versions').select(COMMAND_VERSION_COLUMNS);
    if (commandTypes !== undefined) query = query.where('command_type', 'in', commandTypes);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => rowToCommandVersion(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list command versions');
  }
}
