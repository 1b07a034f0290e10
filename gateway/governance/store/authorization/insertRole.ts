import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToRole, type RoleRecord } from './role.js';

/** A custom role to create. */
export interface NewRole {
  roleName: string;
  description: string | null;
  permissions: readonly string[];
}

/**
 * Create a custom role with a ROLE_CREATED audit row; an existing name is a ConflictError.
 * Call inside a transaction.
 */
export async function insertRole(
  h: CloudHandle,
  role: NewRole,
  actor: CommandActor,
  now: Date,
): Promise<RoleRecord> {
  try {
    const row = await h.cloud
      .insertInto('authorization_roles')
      .values({
        role_name: role.roleName,
        description: role.description,
        permissions: h.codec.json(role.permissions),
        is_system: h.codec.bool(false),
        created_at: h.codec.time(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendCommandAudit(
      h,
      actor,
      [{ event: 'ROLE_CREATED', details: { role_name: role.roleName } }],
      now,
    );
    return rowToRole(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create role ${role.roleName}`);
  }
}
