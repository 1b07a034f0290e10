import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToAssignment, type AssignmentRecord } from './assignment.js';

/** A device's assignments, by type and target. */
export async function listAssignments(
  h: CloudHandle,
  deviceId: string,
): Promise<AssignmentRecord[]> {
  try {
    const rows = await h.cloud
      .selectFrom('device_assignments')
      .selectAll()
      .where('device_id', '=', deviceId)
      .orderBy('assignment_type')
      .orderBy('target_id')
      .execute();
    return rows.map((row) => rowToAssignment(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, `list assignments of device ${deviceId}`);
  }
}
