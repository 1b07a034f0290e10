/**
 * The gate every command passes on its way in, whichever path creates it (a command to one
 * device, a batch, a broadcast, a template application, a schedule run): its version and
 * payload schema (commandVersions.ts), then the authorization policies that cover it for
 * each target device (policies.ts) — the requester must hold every required role, and the
 * strictest approval terms among them say whether it is held for approval.
 *
 * Runs inside the caller's transaction, before anything is written. With no policy
 * configured it costs two indexed reads (versions, policies).
 */
import {
  listAuthorizationPolicies,
  listPolicyDevices,
  type CommandActor,
  type PolicyDevice,
  type StoreHandle,
} from '../../runtime/index.js';
import { Problem } from '../problem.js';
import { canonicalCommandType } from './commandRisk.js';
import {
  resolveCommandVersions,
  type ResolvedCommand,
  type VersionedCommand,
} from './commandVersions.js';
import { policyCovers, stricter, termsOf, type ApprovalTerms } from './policies.js';
import {
  holdsRole,
  isSystemRequester,
  loadRoleSet,
  requesterOf,
  type Requester,
  type RoleSet,
} from './roles.js';

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
 * requester (a schedule run) is not checked for roles — its schedule was, when created.
 */
export async function gateCommands(
  h: StoreHandle,
  request: GateRequest,
  requester: Requester,
  now: Date,
): Promise<GateOutcome> {
  const resolved = await resolveCommandVersions(h, request.commands, request.pathOf);
  const types = [...new Set(request.commands.map((c) => canonicalCommandType(c.command_type)))];
  const policies = await listAuthorizationPolicies(h, { enabledOnly: true, commandTypes: types });
  const devices = new Map<string, PolicyDevice>();
  if (policies.length === 0) return { resolved, devices, approval: null };
  if (request.deviceIds !== 'any')
    for (const d of await listPolicyDevices(h, [...new Set(request.deviceIds)]))
      devices.set(d.deviceId, d);
  const targets: (PolicyDevice | 'any')[] =
    request.deviceIds === 'any'
      ? ['any']
      : [...new Set(request.deviceIds)].map(
          (id) => devices.get(id) ?? { deviceId: id, deviceType: null, location: null },
        );
  let roles: RoleSet | undefined;
  let approval: ApprovalTerms | null = null;
  for (const [i, command] of request.commands.entries()) {
    const subject = { commandType: command.command_type, risk: resolved[i]!.risk };
    for (const device of targets) {
      for (const policy of policies) {
        if (!policyCovers(policy, { ...subject, device })) continue;
        const terms = termsOf(policy);
        if (terms) approval = stricter(approval, terms);
        if (policy.requiredRole === null || isSystemRequester(requester)) continue;
        roles ??= await loadRoleSet(h, requester, now);
        const context = {
          commandType: canonicalCommandType(command.command_type),
          ...(device === 'any' ? {} : { deviceType: device.deviceType }),
        };
        if (!holdsRole(roles, policy.requiredRole, context))
          throw new Problem(
            403,
            'ROLE_REQUIRED',
            `policy ${policy.name} requires role '${policy.requiredRole}' for ${canonicalCommandType(command.command_type)}` +
              (device === 'any' ? '' : ` on device ${device.deviceId}`),
            {
              policy: policy.name,
              required_role: policy.requiredRole,
              path: request.pathOf(i),
            },
          );
      }
    }
  }
  return { resolved, devices, approval };
}

/**
 * The gate of fleet operations (batches, broadcasts, template applications, schedule runs):
 * as {@link gateCommands}, and a 403 APPROVAL_REQUIRED when a command needs approval —
 * only a command to one device can be held for approval (`POST /devices/{id}/commands`);
 * a fleet operation must not slip past the policy by going in bulk.
 */
export async function gateFleetCommands(
  h: StoreHandle,
  request: GateRequest,
  actor: CommandActor,
  now: Date,
): Promise<ResolvedCommand[]> {
  const outcome = await gateCommands(h, request, requesterOf(actor), now);
  if (outcome.approval)
    throw new Problem(
      403,
      'APPROVAL_REQUIRED',
      `policy ${outcome.approval.policy.name} requires ${outcome.approval.minApprovals} approval(s); ` +
        'commands needing approval are sent one device at a time (POST /api/v1/devices/{id}/commands)',
      { policy: outcome.approval.policy.name },
    );
  return outcome.resolved;
}
