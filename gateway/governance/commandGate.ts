/**
 * The gate every command passes on its way in, whichever path creates it (a command to one
 * device, a batch, a broadcast, a template application, a schedule run): its version and
 * payload schema (commandVersions.ts), then the authorization policies that cover it for
 * each target device (policies.ts) — the requester must hold every required role, and the
 * strictest approval terms among them (leaving out the policies that exempt a role the
 * requester holds) say whether it is held for approval: the caller then
 * writes the approval instead of what was asked for (heldCommands.ts for a command to one
 * device, heldFleetOperations.ts for a batch or a broadcast).
 *
 * Runs before anything is written (inside the caller's transaction, if it has one). With no
 * policy configured it costs one round trip (versions and policies: readCommandRules).
 */
import { type RiskLevel, type CloudHandle } from '../../runtime/index.js';
import {
  listPolicyDevices,
  readCommandRules,
  type AuthorizationPolicyRecord,
  type PolicyDevice,
} from './store/authorization/index.js';
import { Problem } from '../problem.js';
import { canonicalCommandType, defaultRisk } from './commandRisk.js';
import {
  currentVersion,
  resolveCommandVersions,
  type ResolvedCommand,
  type VersionedCommand,
} from './commandVersions.js';
import { policyCovers, stricter, termsOf, type ApprovalTerms } from './policies.js';
import { isRiskLevel } from './riskLevel.js';
import type { GateReads } from './gateReads.js';
import {
  holdsRole,
  isSystemRequester,
  loadRoleSet,
  type Requester,
  type RoleContext,
  type RoleSet,
} from './roles.js';

/** Whether `roles` holds one of the roles `policy` exempts from its approval, in `context`. */
const exempt = (roles: RoleSet, policy: AuthorizationPolicyRecord, context: RoleContext): boolean =>
  policy.exemptRoles.some((role) => holdsRole(roles, role, context));

/** What is being asked for. */
export interface GateRequest {
  commands: readonly VersionedCommand[];
  /** The target devices, or `any` when they are picked later (broadcasts). */
  deviceIds: readonly string[] | 'any';
  /** Where command `i` sits in the request body, for error paths (`$`, `$.commands[2]`). */
  pathOf: (index: number) => string;
}

/** What the gate decided. */
export interface GateOutcome {
  /** Version and risk of each command, in request order. */
  resolved: ResolvedCommand[];
  /** The target devices that exist, by id (empty for `any`). */
  devices: ReadonlyMap<string, PolicyDevice>;
  /** The approval the request needs; null when none. */
  approval: ApprovalTerms | null;
}

/**
 * Check `request` by `requester` at `now`: 422 for versions and payloads, 403
 * ROLE_REQUIRED when a covering policy requires a role the requester lacks. A system
 * requester (a schedule run) is not checked for roles — its schedule was, when created —
 * and is never exempt from approval: a run is a person's request made later.
 * `reads` reads the versions, policies and device attributes (from memory: gateReads.ts);
 * by default they are read in `h`.
 */
export async function gateCommands(
  h: CloudHandle,
  request: GateRequest,
  requester: Requester,
  now: Date,
  reads: Pick<GateReads, 'rules' | 'devices' | 'roles'> = {
    rules: (types) => readCommandRules(h, types),
    devices: (ids) => listPolicyDevices(h, ids),
    roles: (who, at) => loadRoleSet(h, who, at),
  },
): Promise<GateOutcome> {
  const types = [...new Set(request.commands.map((c) => canonicalCommandType(c.command_type)))];
  const { versions, policies } = await reads.rules(types);
  const resolved = resolveCommandVersions(versions, request.commands, request.pathOf);
  const devices = new Map<string, PolicyDevice>();
  if (policies.length === 0) return { resolved, devices, approval: null };
  if (request.deviceIds !== 'any')
    for (const d of await reads.devices([...new Set(request.deviceIds)]))
      devices.set(d.deviceId, d);
  const targets: (PolicyDevice | 'any')[] =
    request.deviceIds === 'any'
      ? ['any']
      : [...new Set(request.deviceIds)].map(
          (id) => devices.get(id) ?? { deviceId: id, deviceType: null, location: null },
        );
  const subjects = request.commands.map((command, i) => ({
    commandType: command.command_type,
    risk: resolved[i]!.risk,
    path: request.pathOf(i),
  }));
  const approval = await judge(reads.roles, policies, subjects, targets, requester, now);
  return { resolved, devices, approval };
}

/** A command as the policies see it, and where it sits in the request. */
interface Subject {
  commandType: string;
  risk: RiskLevel;
  path: string;
}

/**
 * Apply `policies` to every subject on every target: 403 ROLE_REQUIRED for a required role
 * the requester lacks; the strictest approval terms of the covering policies that do not
 * exempt the requester, or null.
 */
async function judge(
  loadRoles: (requester: Requester, now: Date) => Promise<RoleSet>,
  policies: readonly AuthorizationPolicyRecord[],
  subjects: readonly Subject[],
  targets: readonly (PolicyDevice | 'any')[],
  requester: Requester,
  now: Date,
): Promise<ApprovalTerms | null> {
  let roles: RoleSet | undefined;
  let approval: ApprovalTerms | null = null;
  for (const subject of subjects) {
    const commandType = canonicalCommandType(subject.commandType);
    for (const device of targets) {
      const context = {
        commandType,
        ...(device === 'any' ? {} : { deviceType: device.deviceType }),
      };
      for (const policy of policies) {
        if (!policyCovers(policy, { ...subject, device })) continue;
        const terms = termsOf(policy);
        if (terms && policy.exemptRoles.length > 0 && !isSystemRequester(requester))
          roles ??= await loadRoles(requester, now);
        if (terms && !(roles && exempt(roles, policy, context)))
          approval = stricter(approval, terms);
        if (policy.requiredRole === null || isSystemRequester(requester)) continue;
        roles ??= await loadRoles(requester, now);
        if (!holdsRole(roles, policy.requiredRole, context))
          throw new Problem(
            403,
            'ROLE_REQUIRED',
            `policy ${policy.name} requires role '${policy.requiredRole}' for ${commandType}` +
              (device === 'any' ? '' : ` on device ${device.deviceId}`),
            { policy: policy.name, required_role: policy.requiredRole, path: subject.path },
          );
      }
    }
  }
  return approval;
}

/** The command type a configuration push is judged as by the policies. */
export const CONFIG_PUSH_COMMAND_TYPE = 'UPDATE_CONFIG';

/**
 * Judge publishing a configuration layer of `scope` / `scopeKey` by `requester` as an
 * UPDATE_CONFIG command would be — it changes what the devices it reaches do, at their next
 * poll, and may carry workflow definitions — at the current UPDATE_CONFIG version's risk: to
 * the device for a device layer, to devices not known in advance for a fleet or device-type
 * layer. 403 ROLE_REQUIRED as for commands; returns the push's risk and the approval terms
 * (null: publish it now).
 */
export async function gateConfigPush(
  h: CloudHandle,
  layer: { scope: string; scopeKey: string },
  requester: Requester,
  now: Date,
): Promise<{ risk: RiskLevel; approval: ApprovalTerms | null }> {
  const { versions, policies } = await readCommandRules(h, [CONFIG_PUSH_COMMAND_TYPE]);
  const level = currentVersion(
    versions.filter((v) => v.commandType === CONFIG_PUSH_COMMAND_TYPE),
  )?.riskLevel;
  const risk = isRiskLevel(level) ? level : defaultRisk(CONFIG_PUSH_COMMAND_TYPE);
  if (policies.length === 0) return { risk, approval: null };
  const targets: (PolicyDevice | 'any')[] =
    layer.scope === 'device'
      ? [
          (await listPolicyDevices(h, [layer.scopeKey]))[0] ?? {
            deviceId: layer.scopeKey,
            deviceType: null,
            location: null,
          },
        ]
      : ['any'];
  const subject = { commandType: CONFIG_PUSH_COMMAND_TYPE, risk, path: '$' };
  const loadRoles = (who: Requester, at: Date) => loadRoleSet(h, who, at);
  return { risk, approval: await judge(loadRoles, policies, [subject], targets, requester, now) };
}
