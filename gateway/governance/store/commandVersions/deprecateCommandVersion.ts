import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_VERSION_COLUMNS,
  rowToCommandVersion,
  type CommandVersionRecord,
} from './commandVersion.js';

/** A deprecation. */
export interface CommandVersionDeprecation {
  commandType: string;
  version: string;
  /** The version callers should move to, if any. */
  replacedBy: string | null;
  reason: string | null;
}

/**
 * Mark a version deprecated, with a DEPRECATED changelog entry and a
 * COMMAND_VERSION_DEPRECATED audit row. Undefined when the version does not exist or is
 * deprecated already (nothing is written then). Call inside a transaction.
 */
export async function deprecateCommandVersion(
  h: CloudHandle,
  deprecation: CommandVersionDeprecation,
  actor: CommandActor,
  now: Date,
): Promise<CommandVersionRecord | undefined> {
  const { commandType, version, replacedBy, reason } = deprecation;
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .updateTable('command_versions')
      .set({ deprecated: h.codec.bool(true), deprecated_at: at, replaced_by: replacedBy })
      .where('command_type', '=', commandType)
      .where('version', '=', version)
      .where('deprecated', '=', h.codec.bool(false))
      .returning(COMMAND_VERSION_COLUMNS)
      .executeTakeFirst();
    if (!row) return undefined;
    const changes = { replaced_by: replacedBy, reason };
    await h.cloud
      .insertInto('command_changelog')
      .values({
        command_type: commandType,
        from_version: null,
        to_version: version,
        change_type: 'DEPRECATED',
        changes: h.codec.json(changes),
        author: actor.actor,
        created_at: at,
      })
      .execute();
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'COMMAND_VERSION_DEPRECATED',
          details: { command_type: commandType, version, ...changes },
        },
      ],
      now,
    );
    return rowToCommandVersion(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `deprecate command version ${commandType} ${version}`);
  }
}
