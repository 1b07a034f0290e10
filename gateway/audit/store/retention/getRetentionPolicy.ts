import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  RETENTION_POLICY_COLUMNS,
  rowToRetentionPolicy,
  type RetentionPolicyRecord,
} from './retentionPolicy.js';

/** A retention policy, or undefined. */
export async function getRetentionPolicy(
  h: CloudHandle,
  policyId: string,
): Promise<RetentionPolicyRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('audit_retention_policies')
      .select(RETENTION_POLICY_COLUMNS)
      .where('policy_id', '=', policyId)
      .executeTakeFirst();
    return row && rowToRetentionPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get retention policy ${policyId}`);
  }
}
