import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  AUTHORIZATION_POLICY_COLUMNS,
  rowToAuthorizationPolicy,
  type AuthorizationPolicyRecord,
} from './authorizationPolicy.js';

/** Filters of {@link listAuthorizationPolicies}. */
export interface AuthorizationPolicyFilter {
  /** Only enabled policies. */
  enabledOnly?: boolean;
  /** Only policies that may cover these command types (theirs, or any type). */
  commandTypes?: readonly string[];
}

/** Authorization policies by name (at most 1000). */
export async function listAuthorizationPolicies(
  h: CloudHandle,
  filter: AuthorizationPolicyFilter = {},
): Promise<AuthorizationPolicyRecord[]> {
  try {
    let query = h.cloud.selectFrom('authorization_policies').select(AUTHORIZATION_POLICY_COLUMNS);
    if (filter.enabledOnly) query = query.where('enabled', '=', h.codec.bool(true));
    const types = filter.commandTypes;
    if (types !== undefined)
      query = query.where((eb) =>
        types.length === 0
          ? eb('command_type', 'is', null)
          : eb.or([eb('command_type', 'is', null), eb('command_type', 'in', types)]),
      );
    const rows = await query.orderBy('name').limit(1000).execute();
    return rows.map((row) => rowToAuthorizationPolicy(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list authorization policies');
  }
}

/** One policy, or undefined. */
export async function getAuthorizationPolicy(
  h: CloudHandle,
  policyId: string,
): Promise<AuthorizationPolicyRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('authorization_policies')
      .select(AUTHORIZATION_POLICY_COLUMNS)
      .where('policy_id', '=', policyId)
      .executeTakeFirst();
    return row && rowToAuthorizationPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `read authorization policy ${policyId}`);
  }
}
