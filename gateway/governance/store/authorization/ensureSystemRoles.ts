import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { SYSTEM_ROLES } from './role.js';

/**
 * Make sure the system roles exist (idempotent; several gateways starting at once insert
 * them once). Existing rows are left as they are.
 */
export async function ensureSystemRoles(h: CloudHandle): Promise<void> {
  try {
    await h.cloud
      .insertInto('authorization_roles')
      .values(
        SYSTEM_ROLES.map((r) => ({
          role_name: r.roleName,
          description: r.description,
          permissions: h.codec.json(r.permissions),
          is_system: h.codec.bool(true),
        })),
      )
      .onConflict((oc) => oc.column('role_name').doNothing())
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'create the system roles');
  }
}
