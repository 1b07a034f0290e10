import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToRoleAssignment, type PrincipalType, type RoleAssignmentRecord } from './role.js';

/** Filters of {@link listRoleAssignments}. */
export interface RoleAssignmentFilter {
  principalType?: PrincipalType;
  principalId?: string;
  roleName?: string;
  limit?: number;
}

/** Role assignments, newest first (default 100, at most 500). */
export async function listRoleAssignments(
  h: CloudHandle,
  filter: RoleAssignmentFilter = {},
): Promise<RoleAssignmentRecord[]> {
  const limit = Math.min(Math.max(filter.limit ?? 100, 1), 500);
  try {
    let query = h.cloud.selectFrom('role_assignments').selectAll();
    if (filter.principalType !== undefined)
      query = query.where('principal_type', '=', filter.principalType);
    if (filter.principalId !== undefined)
      query = query.where('principal_id', '=', filter.principalId);
    if (filter.roleName !== undefined) query = query.where('role_name', '=', filter.roleName);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('assignment_id')
      .limit(limit)
      .execute();
    return rows.map((row) => rowToRoleAssignment(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list role assignments');
  }
}

/**
 * The assignments in force at `now` of any of `principals` (a token and its operator name,
 * say): not expired. At most 200 — a principal holding more roles than that is a mistake.
 */
export async function listPrincipalRoles(
  h: CloudHandle,
  principals: readonly { type: PrincipalType; id: string }[],
  now: Date,
): Promise<RoleAssignmentRecord[]> {
  if (principals.length === 0) return [];
  try {
    const rows = await h.cloud
      .selectFrom('role_assignments')
      .selectAll()
      .where((eb) =>
        eb.or(
          principals.map((p) =>
            eb.and([eb('principal_type', '=', p.type), eb('principal_id', '=', p.id)]),
          ),
        ),
      )
      .where((eb) =>
        eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', h.codec.time(now))]),
      )
      .orderBy('assignment_id')
      .limit(200)
      .execute();
    return rows.map((row) => rowToRoleAssignment(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list the roles of a principal');
  }
}
