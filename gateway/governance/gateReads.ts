/**
 * The command gate's reads held in memory, so that `POST …/commands` to one device runs no
 * statement before its command is created: the versions and authorization policies of the
 * command's type (read through the shared reader, sharedRuleReads.ts), the device's type
 * and location that policies match on, and the requester's role assignments that a policy's
 * required or exempt roles are checked against.
 *
 * Rules are dropped when a command version or an authorization policy is added, changed or
 * removed (`rules` on the change bus, announced by the routes that make those changes, on
 * any gateway); a device's attributes when the device is changed or deleted (`devices`).
 * Unknown devices are not kept. Every entry expires `ttlMs` after the read that filled it
 * began, and nothing is kept or served while the gateway cannot vouch that it hears changes
 * in time (`trusted`) — the same bounds as device credentials (credentialCache.ts): a policy
 * enabled on another gateway judges the commands sent here from the moment its notification
 * arrives. Role assignments are dropped when one is added or taken back (`roles`); one that
 * expires while held stops counting at its `expires_at`, checked at every use.
 */
import { type CacheChange, type CloudStore } from '../../runtime/index.js';
import {
  listPolicyDevices,
  type CommandRules,
  type PolicyDevice,
} from './store/authorization/index.js';
import {
  CACHE_DEFAULTS,
  createInvalidatingCache,
  type CacheBounds,
} from '../cache/invalidatingCache.js';
import { createSharedRuleReads, type RuleReader } from './sharedRuleReads.js';
import { loadRoleSet, type Requester, type RoleSet } from './roles.js';
import type { RoleAssignmentRecord } from './store/authorization/index.js';

/** What the gate reads, from memory when it can. */
export interface GateReads {
  /** The rules for some canonical command types. */
  readonly rules: RuleReader;
  /** The policy attributes of the devices among `deviceIds` that exist. */
  devices(deviceIds: readonly string[]): Promise<PolicyDevice[]>;
  /** The role assignments of `requester` in force at `now`. */
  roles(requester: Requester, now: Date): Promise<RoleSet>;
  /** Drop what `change` names; everything when undefined. */
  apply(change: CacheChange | undefined): void;
}

/** The gate's reads over `store`, keeping entries while `trusted()`. */
export function createGateReads(
  store: CloudStore,
  trusted: () => boolean,
  bounds: CacheBounds = {},
): GateReads {
  const settings = {
    maxEntries: bounds.maxEntries ?? CACHE_DEFAULTS.maxEntries,
    ttlMs: bounds.ttlMs ?? CACHE_DEFAULTS.ttlMs,
    trusted,
  };
  const rules = createInvalidatingCache<CommandRules>(settings);
  const devices = createInvalidatingCache<PolicyDevice>(settings);
  const assignments = createInvalidatingCache<readonly RoleAssignmentRecord[]>(settings);
  const readShared = createSharedRuleReads(store);
  const device = async (deviceId: string) =>
    devices.get(deviceId) ??
    (await devices.fill(
      deviceId,
      async () => (await listPolicyDevices(store, [deviceId]))[0],
      (found) => found,
    ));
  return {
    async rules(types) {
      const key = JSON.stringify([...types].sort());
      return (
        rules.get(key) ??
        (await rules.fill(
          key,
          () => readShared(types),
          (read) => read,
        ))
      );
    },
    async roles(requester, now) {
      const key = JSON.stringify([requester.name, requester.role, requester.tokenId ?? null]);
      const held =
        assignments.get(key) ??
        (await assignments.fill(
          key,
          async () => (await loadRoleSet(store, requester, now)).assignments,
          (read) => read,
        ));
      const at = now.getTime();
      return {
        requester,
        assignments: held.filter((a) => a.expiresAt === null || a.expiresAt.getTime() > at),
      };
    },
    async devices(deviceIds) {
      const found = await Promise.all([...new Set(deviceIds)].map(device));
      return found.filter((d): d is PolicyDevice => d !== undefined);
    },
    apply(change) {
      if (change === undefined) {
        rules.clear();
        devices.clear();
        assignments.clear();
      } else if (change.kind === 'rules') rules.clear();
      else if (change.kind === 'roles') assignments.clear();
      else if (change.kind === 'devices') change.deviceIds.forEach((id) => devices.invalidate(id));
    },
  };
}

/** The change a route announces when it adds, changes or removes a version or a policy. */
export const RULES_CHANGED: CacheChange = { kind: 'rules' };

/** The change a route announces when it adds or takes back a role assignment. */
export const ROLES_CHANGED: CacheChange = { kind: 'roles' };
