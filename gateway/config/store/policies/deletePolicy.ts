import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Delete every version of policy `name` and the POLICY assignments that name it. Run it in a
 * transaction. False when there is no such policy.
 */
export async function deletePolicy(h: CloudHandle, name: string): Promise<boolean> {
  try {
    await h.cloud
      .deleteFrom('device_assignments')
      .where('assignment_type', '=', 'POLICY')
      .where('target_id', '=', name)
      .execute();
    const r = await h.cloud.deleteFrom('policies').where('name', '=', name).executeTakeFirst();
    return r.numDeletedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `delete policy ${name}`);
  }
}
