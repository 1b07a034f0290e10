/**
 * The roles a requester holds, for authorization policies: the role of its API token, plus
 * the roles assigned (role_assignments) to that token or to its operator name, unexpired.
 * System roles nest — an admin holds operator and viewer, an operator holds viewer — custom
 * roles are held only where assigned. An assignment's scope (`command_types`,
 * `device_types`) limits it to commands of those types / for devices of those types; a
 * scoped assignment never counts where the command or device is not known (route access, a
 * broadcast to a filter).
 */
import { type CloudHandle } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { listPrincipalRoles, type RoleAssignmentRecord } from './store/authorization/index.js';
import { USER_ROLES } from '../auth/principal.js';

/** Who is asking: an operator (by name and token) or the system (schedules). */
export interface Requester {
  name: string;
  role: string;
  tokenId?: string | undefined;
}

/** What a role is being held for. */
export interface RoleContext {
  commandType?: string;
  /** The device's type; `null` when it has none; absent when the device is not known. */
  deviceType?: string | null;
}

/** The roles of a requester. */
export interface RoleSet {
  requester: Requester;
  assignments: readonly RoleAssignmentRecord[];
}

/** The requester of an audit actor. */
export const requesterOf = (actor: CommandActor): Requester => ({
  name: actor.actor,
  role: actor.role,
  ...(actor.tokenId !== undefined ? { tokenId: actor.tokenId } : {}),
});

/** Whether `actor` is the gateway itself (a schedule run), not a person. */
export const isSystemRequester = (requester: Requester): boolean => requester.role === 'system';

/** Load the role set of `requester` at `now`. */
export async function loadRoleSet(
  h: CloudHandle,
  requester: Requester,
  now: Date,
): Promise<RoleSet> {
  if (isSystemRequester(requester) || requester.role === 'device')
    return { requester, assignments: [] };
  const principals = [
    { type: 'user' as const, id: requester.name },
    ...(requester.tokenId !== undefined ? [{ type: 'token' as const, id: requester.tokenId }] : []),
  ];
  return { requester, assignments: await listPrincipalRoles(h, principals, now) };
}

const rank = (role: string): number => {
  const i = (USER_ROLES as readonly string[]).indexOf(role);
  return i < 0 ? -1 : USER_ROLES.length - i; // admin 3, operator 2, viewer 1
};

const list = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.map(String) : undefined;

/** Whether an assignment's scope admits `context`. */
export function scopeAdmits(scope: Record<string, unknown>, context: RoleContext): boolean {
  const types = list(scope.command_types);
  if (types !== undefined) {
    if (context.commandType === undefined) return false;
    if (!types.map((t) => t.toUpperCase()).includes(context.commandType.toUpperCase()))
      return false;
  }
  const deviceTypes = list(scope.device_types);
  if (deviceTypes !== undefined) {
    if (context.deviceType === undefined || context.deviceType === null) return false;
    if (!deviceTypes.includes(context.deviceType)) return false;
  }
  return true;
}

/** The roles `set` holds in `context` (system roles not yet expanded by nesting). */
export function heldRoles(set: RoleSet, context: RoleContext = {}): string[] {
  return [
    set.requester.role,
    ...set.assignments.filter((a) => scopeAdmits(a.scope, context)).map((a) => a.roleName),
  ];
}

/** Whether `set` holds `role` in `context`. */
export function holdsRole(set: RoleSet, role: string, context: RoleContext = {}): boolean {
  const held = heldRoles(set, context);
  const needed = rank(role);
  if (needed > 0) return held.some((r) => rank(r) >= needed);
  return held.includes(role);
}
