/**
 * Route access through role assignments: an operator whose token's own role does not admit
 * a route may still call it when a role admitting it is assigned to that token or to its
 * operator name (role_assignments; unscoped and unexpired — see governance/roles.ts). The
 * token's own role is checked first and needs no query, so existing role checks cost what
 * they did; the assignments are read only on what would otherwise be a 403. The principal
 * handed on carries the role it was admitted with (the most powerful one that admits the
 * route), so the handler's own checks and the audit trail see the same role.
 */
import { type CloudStore } from '../../runtime/index.js';
import { listPrincipalRoles } from '../governance/store/authorization/index.js';
import { requireRole, USER_ROLES, type Principal, type UserRole } from './principal.js';

type User = Extract<Principal, { kind: 'user' }>;

/** `principal` admitted to a route open to `roles`, or a 403 problem. */
export async function admitUser(
  store: CloudStore,
  principal: User,
  roles: readonly UserRole[],
  now: Date,
): Promise<User> {
  if (roles.includes(principal.role)) return principal;
  if (roles.length > 0) {
    const assigned = await listPrincipalRoles(
      store,
      [
        { type: 'token', id: principal.tokenId },
        { type: 'user', id: principal.name },
      ],
      now,
    );
    const unscoped = new Set(
      assigned.filter((a) => Object.keys(a.scope).length === 0).map((a) => a.roleName),
    );
    // as with the token's own role, a route admits exactly the roles it lists; USER_ROLES is
    // most powerful first, so the principal goes on with the most powerful admitting role
    const admitted = USER_ROLES.find((r) => roles.includes(r) && unscoped.has(r));
    if (admitted) return { ...principal, role: admitted };
  }
  requireRole(principal, roles); // throws the usual 403
  return principal;
}
