import type { PolicyType, CloudHandle } from '../../../../runtime/index.js';
import { translateDriverError } from '../../../../runtime/index.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** A new policy (version 1). */
export interface NewPolicy {
  policyId: string;
  name: string;
  policyType: PolicyType;
  rules: unknown[];
  enabled?: boolean;
  description?: string;
  createdBy?: string;
}

/** Create version 1 of a policy; a name already in use is a ConflictError. */
export async function insertPolicy(
  h: CloudHandle,
  policy: NewPolicy,
  now: Date,
): Promise<PolicyRecord> {
  try {
    const row = await h.cloud
      .insertInto('policies')
      .values({
        policy_id: policy.policyId,
        name: policy.name,
        policy_type: policy.policyType,
        version: 1,
        rules: h.codec.json(policy.rules),
        enabled: h.codec.bool(policy.enabled ?? true),
        description: policy.description ?? null,
        created_by: policy.createdBy ?? null,
        created_at: h.codec.time(now),
        updated_at: h.codec.time(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return rowToPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create policy ${policy.name}`);
  }
}
