import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { getPolicy } from './getPolicy.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** A new version of an existing policy; absent fields are carried over from the newest. */
export interface PolicyRevision {
  policyId: string;
  rules: unknown[];
  enabled?: boolean;
  description?: string;
  createdBy?: string;
}

/**
 * Add version n + 1 of policy `name` (its type never changes). Undefined when there is no
 * such policy; a concurrent revision that took the same version number is a ConflictError.
 */
export async function addPolicyVersion(
  h: CloudHandle,
  name: string,
  revision: PolicyRevision,
  now: Date,
): Promise<PolicyRecord | undefined> {
  const latest = await getPolicy(h, name);
  if (!latest) return undefined;
  try {
    const row = await h.cloud
      .insertInto('policies')
      .values({
        policy_id: revision.policyId,
        name,
        policy_type: latest.policyType,
        version: latest.version + 1,
        rules: h.codec.json(revision.rules),
        enabled: h.codec.bool(revision.enabled ?? latest.enabled),
        description: revision.description ?? latest.description,
        created_by: revision.createdBy ?? null,
        created_at: h.codec.time(now),
        updated_at: h.codec.time(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return rowToPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `revise policy ${name}`);
  }
}
