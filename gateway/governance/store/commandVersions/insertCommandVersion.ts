import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_VERSION_COLUMNS,
  rowToCommandVersion,
  type CommandVersionRecord,
} from './commandVersion.js';

/** A command version to register. */
export interface NewCommandVersion {
  id: string;
  commandType: string;
  version: string;
  payloadSchema: unknown;
  description: string | null;
  riskLevel: string | null;
  /** The version this one follows (null for the first), for the changelog. */
  fromVersion: string | null;
  /** What changed since `fromVersion`, for the changelog. */
  changes: Record<string, unknown>;
}

/**
 * Register a command version with its CREATED changelog entry and a
 * COMMAND_VERSION_REGISTERED audit row. A version registered twice is a ConflictError (the
 * unique key). Call inside a transaction.
 */
export async function insertCommandVersion(
  h: CloudHandle,
  version: NewCommandVersion,
  actor: CommandActor,
  now: Date,
): Promise<CommandVersionRecord> {
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .insertInto('command_versions')
      .values({
        id: version.id,
        command_type: version.commandType,
        version: version.version,
        payload_schema: h.codec.json(version.payloadSchema),
        description: version.description,
        risk_level: version.riskLevel,
        created_by: actor.actor,
        created_at: at,
      })
      .returning(COMMAND_VERSION_COLUMNS)
      .executeTakeFirstOrThrow();
    await h.cloud
      .insertInto('command_changelog')
      .values({
        command_type: version.commandType,
        from_version: version.fromVersion,
        to_version: version.version,
        change_type: 'CREATED',
        changes: h.codec.json(version.changes),
        author: actor.actor,
        created_at: at,
      })
      .execute();
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'COMMAND_VERSION_REGISTERED',
          details: {
            command_type: version.commandType,
            version: version.version,
            from_version: version.fromVersion,
            risk_level: version.riskLevel,
          },
        },
      ],
      now,
    );
    return rowToCommandVersion(h.codec, row);
  } catch (error) {
    throw translateDriverError(
      error,
      `register command version ${version.commandType} ${version.version}`,
    );
  }
}
