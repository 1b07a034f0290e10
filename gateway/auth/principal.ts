/**
 * Who is calling: an operator (API token with a role) or a device (signed request). Every
 * route states which principals it admits; this module turns that into 401 / 403.
 */
import { Problem } from '../problem.js';

/** Operator roles, most powerful first. */
export const USER_ROLES = ['admin', 'operator', 'viewer'] as const;
/** An operator role. */
export type UserRole = (typeof USER_ROLES)[number];

/** The authenticated caller of a request. */
export type Principal =
  | { kind: 'user'; tokenId: string; name: string; role: UserRole }
  | { kind: 'device'; deviceId: string };

/** 403 unless the caller is an operator with one of `roles`. */
export function requireRole(principal: Principal, roles: readonly UserRole[]): void {
  if (principal.kind !== 'user' || !roles.includes(principal.role))
    throw new Problem(
      403,
      'FORBIDDEN',
      principal.kind === 'device'
        ? 'devices may not do this'
        : roles.length === 0
          ? 'only devices may do this'
          : `role '${principal.role}' may not do this (needs ${roles.join(' or ')})`,
    );
}

/** 403 unless the caller is device `deviceId` itself, or an operator with one of `roles`. */
export function requireDeviceOrRole(
  principal: Principal,
  deviceId: string,
  roles: readonly UserRole[],
): void {
  if (principal.kind === 'device') {
    if (principal.deviceId !== deviceId)
      throw new Problem(403, 'FORBIDDEN', 'a device may only use its own resources');
    return;
  }
  requireRole(principal, roles);
}
