import { sql } from 'kysely';
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** What {@link deleteRole} did. */
export type RoleDeletion = 'deleted' | 'not_found' | 'system' | 'in_use';

/**
 * Delete custom role `roleName` with a ROLE_DELETED audit row. A system role is never
 * deleted, nor a role still assigned to someone or named by an authorization policy (as
 * its required role, an approver role or an exempt role) — deleting it would silently change who may do
 * what. Call inside a transaction.
 */
export async function deleteRole(
  h: CloudHandle,
  roleName: string,
  actor: CommandActor,
  now: Date,
): Promise<RoleDeletion> {
  try {
    const role = await h.cloud
      .selectFrom('authorization_roles')
      .select(['role_name', 'is_system'])
      .where('role_name', '=', roleName)
      .forUpdate()
      .executeTakeFirst();
    if (!role) return 'not_found';
    if (h.codec.parseBool(role.is_system)) return 'system';
    const assigned = await h.cloud
      .selectFrom('role_assignments')
      .select('assignment_id')
      .where('role_name', '=', roleName)
      .limit(1)
      .executeTakeFirst();
    const named = await h.cloud
      .selectFrom('authorization_policies')
      .select('policy_id')
      .where((eb) =>
        eb.or([
          eb('required_role', '=', roleName),
          sql<boolean>`approver_roles @> ${h.codec.json([roleName])}::jsonb`,
          sql<boolean>`exempt_roles @> ${h.codec.json([roleName])}::jsonb`,
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    if (assigned || named) return 'in_use';
    await h.cloud.deleteFrom('authorization_roles').where('role_name', '=', roleName).execute();
    await appendCommandAudit(
      h,
      actor,
      [{ event: 'ROLE_DELETED', details: { role_name: roleName } }],
      now,
    );
    return 'deleted';
  } catch (error) {
    throw translateDriverError(error, `delete role ${roleName}`);
  }
}
