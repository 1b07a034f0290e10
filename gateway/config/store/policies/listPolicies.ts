import type { PolicyType, CloudHandle } from '../../../../runtime/index.js';
import { translateDriverError } from '../../../../runtime/index.js';
import { isLatestVersion } from './latestVersion.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** Filters of {@link listPolicies}. */
export interface PolicyFilter {
  policyType?: PolicyType;
  enabled?: boolean;
}

/** The newest version of every policy matching `filter`, by name. */
export async function listPolicies(
  h: CloudHandle,
  filter: PolicyFilter = {},
): Promise<PolicyRecord[]> {
  let query = h.cloud.selectFrom('policies').selectAll().where(isLatestVersion);
  if (filter.policyType) query = query.where('policy_type', '=', filter.policyType);
  if (filter.enabled !== undefined)
    query = query.where('enabled', '=', h.codec.bool(filter.enabled));
  try {
    const rows = await query.orderBy('name').execute();
    return rows.map((row) => rowToPolicy(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list policies');
  }
}
