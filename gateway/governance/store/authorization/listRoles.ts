import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToRole, type RoleRecord } from './role.js';

/** Every role (system roles first, then by name), or only `names`. */
export async function listRoles(h: CloudHandle, names?: readonly string[]): Promise<RoleRecord[]> {
  if (names !== undefined && names.length === 0) return [];
  try {
    let query = h.cloud.selectFrom('authorization_roles').selectAll();
    if (names !== undefined) query = query.where('role_name', 'in', names);
    const rows = await query.orderBy('is_system', 'desc').orderBy('role_name').execute();
    return rows.map((row) => rowToRole(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list roles');
  }
}
