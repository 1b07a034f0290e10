/**
 * Business and fraud policies, versioned by name: every change of rules is a new row with
 * version n + 1, and the newest version of a name is the policy in force. `enabled` is a
 * switch on that newest version, not a new version.
 */
import type { PolicyType, Codec } from '../../../../runtime/index.js';

/** A policy version. */
export interface PolicyRecord {
  policyId: string;
  name: string;
  policyType: PolicyType;
  version: number;
  rules: unknown[];
  enabled: boolean;
  description: string | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A policies row. */
export interface PolicyRow {
  policy_id: string;
  name: string;
  policy_type: string;
  version: number | string;
  rules: unknown;
  enabled: boolean | number;
  description: string | null;
  created_by: string | null;
  created_at: unknown;
  updated_at: unknown;
}

/** Decode a policy row. */
export function rowToPolicy(codec: Codec, row: PolicyRow): PolicyRecord {
  const rules = codec.parseJson(row.rules);
  return {
    policyId: row.policy_id,
    name: row.name,
    policyType: row.policy_type as PolicyType,
    version: codec.parseInt(row.version),
    rules: Array.isArray(rules) ? (rules as unknown[]) : [],
    enabled: codec.parseBool(row.enabled),
    description: row.description,
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}
