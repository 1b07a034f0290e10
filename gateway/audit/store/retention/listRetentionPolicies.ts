import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  RETENTION_POLICY_COLUMNS,
  rowToRetentionPolicy,
  type RetentionPolicyRecord,
} from './retentionPolicy.js';

/** Every retention policy (a handful), by name; only enabled ones when `enabledOnly`. */
export async function listRetentionPolicies(
  h: CloudHandle,
  options: { enabledOnly?: boolean } = {},
): Promise<RetentionPolicyRecord[]> {
  try {
    let query = h.cloud.selectFrom('audit_retention_policies').select(RETENTION_POLICY_COLUMNS);
    if (options.enabledOnly) query = query.where('enabled', '=', h.codec.bool(true));
    const rows = await query.orderBy('name').execute();
    return rows.map((row) => rowToRetentionPolicy(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list retention policies');
  }
}
