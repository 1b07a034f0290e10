import { translateDriverError } from '../../../../runtime/index.js';
import type { StoreHandle } from '../../../../runtime/index.js';

/** Remove assignment `assignmentId` of device `deviceId`; false when there is none. */
export async function deleteAssignment(
  h: StoreHandle,
  deviceId: string,
  assignmentId: string,
): Promise<boolean> {
  try {
    const r = await h.db
      .deleteFrom('device_assignments')
      .where('device_id', '=', deviceId)
      .where('assignment_id', '=', assignmentId)
      .executeTakeFirst();
    return r.numDeletedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `remove assignment ${assignmentId}`);
  }
}
