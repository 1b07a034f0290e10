/**
 * Which authorization policies cover a command, and what they demand together. A policy
 * covers a command when each criterion it sets matches — its command type, its device
 * filter (`device_types`, `locations`, `device_ids`: the device's value must be listed), its
 * risk level (the command's risk is at that level or above). An unset criterion matches
 * everything. When several policies cover a command:
 *
 * - the requester must hold the required role of every one of them;
 * - the command is held for approval when any of them requires it, under the terms of the
 *   strictest (most approvers; then the shortest time to decide; then the first by name) —
 *   save a policy one of whose exempt roles the requester holds, which does not hold it.
 *
 * A command whose device is not known in advance (a broadcast to a filter) is covered by
 * every policy whose other criteria match, whatever its device filter says — the safe
 * reading when the devices are only picked later.
 */
import { z } from 'zod';
import type { RiskLevel } from '../../runtime/index.js';
import type { AuthorizationPolicyRecord, PolicyDevice } from './store/authorization/index.js';
import { deviceIdField, deviceTypeField } from '../fields.js';
import { canonicalCommandType, riskAtLeast } from './commandRisk.js';
import { isRiskLevel } from './riskLevel.js';

/** The device filter of a policy. */
export const deviceFilterField = z.strictObject({
  device_types: z.array(deviceTypeField).min(1).max(100).optional(),
  locations: z.array(z.string().min(1).max(200)).min(1).max(100).optional(),
  device_ids: z.array(deviceIdField).min(1).max(1000).optional(),
});

/** What a policy is matched against. */
export interface CommandSubject {
  commandType: string;
  risk: RiskLevel;
  /** The target device, or `any` when it is picked later. */
  device: PolicyDevice | 'any';
}

const listed = (value: unknown, item: string | null): boolean =>
  !Array.isArray(value) || (item !== null && value.map(String).includes(item));

/** Whether `policy` covers `subject` (enabled or not: the caller filters). */
export function policyCovers(policy: AuthorizationPolicyRecord, subject: CommandSubject): boolean {
  if (
    policy.commandType !== null &&
    canonicalCommandType(policy.commandType) !== canonicalCommandType(subject.commandType)
  )
    return false;
  if (isRiskLevel(policy.riskLevel) && !riskAtLeast(subject.risk, policy.riskLevel)) return false;
  const device = subject.device;
  if (device === 'any') return true;
  const filter = policy.deviceFilter;
  return (
    listed(filter.device_types, device.deviceType) &&
    listed(filter.locations, device.location) &&
    listed(filter.device_ids, device.deviceId)
  );
}

/** The approval terms of a command. */
export interface ApprovalTerms {
  policy: AuthorizationPolicyRecord;
  minApprovals: number;
  approverRoles: string[];
  ttlSeconds: number;
}

/** The stricter of two approval terms. */
export function stricter(a: ApprovalTerms | null, b: ApprovalTerms): ApprovalTerms {
  if (a === null) return b;
  return (b.minApprovals - a.minApprovals ||
    a.ttlSeconds - b.ttlSeconds ||
    a.policy.name.localeCompare(b.policy.name)) > 0
    ? b
    : a;
}

/** The approval terms `policy` sets, or null when it requires no approval. */
export const termsOf = (policy: AuthorizationPolicyRecord): ApprovalTerms | null =>
  policy.requiresApproval
    ? {
        policy,
        minApprovals: policy.minApprovals,
        approverRoles: policy.approverRoles,
        ttlSeconds: policy.approvalTtlSeconds,
      }
    : null;
