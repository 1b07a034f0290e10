import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { isLatestVersion } from './latestVersion.js';
import { rowToPolicy, type PolicyRecord } from './policy.js';

/** Enable or disable policy `name` (its newest version); undefined when there is none. */
export async function setPolicyEnabled(
  h: CloudHandle,
  name: string,
  enabled: boolean,
  now: Date,
): Promise<PolicyRecord | undefined> {
  try {
    const row = await h.cloud
      .updateTable('policies')
      .set({ enabled: h.codec.bool(enabled), updated_at: h.codec.time(now) })
      .where('name', '=', name)
      .where(isLatestVersion)
      .returningAll()
      .executeTakeFirst();
    return row && rowToPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `${enabled ? 'enable' : 'disable'} policy ${name}`);
  }
}
