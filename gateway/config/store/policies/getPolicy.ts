import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { isLatestVersion } from './latestVersion.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** Policy `name`: its newest version, or `version` when given; undefined when there is none. */
export async function getPolicy(
  h: CloudHandle,
  name: string,
  version?: number,
): Promise<PolicyRecord | undefined> {
  const query = h.cloud.selectFrom('policies').selectAll().where('name', '=', name);
  try {
    const row = await (
      version === undefined ? query.where(isLatestVersion) : query.where('version', '=', version)
    ).executeTakeFirst();
    return row && rowToPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `get policy ${name}`);
  }
}
