import { translateDriverError } from '../../../../runtime/index.js';
import type { StoreHandle } from '../../../../runtime/index.js';

/**
 * Delete every version of policy `name` and the POLICY assignments that name it. Run it in a
 * transaction. False when there is no such policy.
 */
export async function deletePolicy(h: StoreHandle, name: string): Promise<boolean> {
  try {
    await h.db
      .deleteFrom('device_assignments')
      .where('assignment_type', '=', 'POLICY')
      .where('target_id', '=', name)
      .execute();
    const r = await h.db.deleteFrom('policies').where('name', '=', name).executeTakeFirst();
    return r.numDeletedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `delete policy ${name}`);
  }
}
