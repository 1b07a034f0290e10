import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** Every version of policy `name`, newest first (empty when there is no such policy). */
export async function listPolicyVersions(h: CloudHandle, name: string): Promise<PolicyRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('policies')
      .selectAll()
      .where('name', '=', name)
      .orderBy('version', 'desc')
      .execute();
    return rows.map((row) => rowToPolicy(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, `list versions of policy ${name}`);
  }
}
