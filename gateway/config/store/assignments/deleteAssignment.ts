import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/** Remove assignment `assignmentId` of device `deviceId`; false when there is none. */
export async function deleteAssignment(
  h: CloudHandle,
  deviceId: string,
  assignmentId: string,
): Promise<boolean> {
  try {
    const r = await h.cloud
      .deleteFrom('device_assignments')
      .where('device_id', '=', deviceId)
      .where('assignment_id', '=', assignmentId)
      .executeTakeFirst();
    return r.numDeletedRows > 0n;
  } catch (error) {
    throw translateDriverError(error, `remove assignment ${assignmentId}`);
  }
}
