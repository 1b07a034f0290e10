import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import type { CommandChangelogRecord } from './commandVersion.js';

/** The changelog of `commandType`, oldest first (at most 1000 entries). */
export async function listCommandChangelog(
  h: CloudHandle,
  commandType: string,
): Promise<CommandChangelogRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('command_changelog')
      .selectAll()
      .where('command_type', '=', commandType)
      .orderBy('id')
      .limit(1000)
      .execute();
    return rows.map((row) => ({
      id: h.codec.parseInt(row.id),
      commandType: row.command_type,
      fromVersion: row.from_version,
      toVersion: row.to_version,
      changeType: row.change_type,
      changes: h.codec.parseJson(row.changes) ?? {},
      author: row.author,
      createdAt: h.codec.parseTime(row.created_at),
    }));
  } catch (error) {
    throw translateDriverError(error, `list the changelog of ${commandType}`);
  }
}
