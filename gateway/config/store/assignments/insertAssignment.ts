import type { AssignmentType, CloudHandle } from '../../../../runtime/index.js';
import { translateDriverError } from '../../../../runtime/index.js';
import { rowToAssignment, type AssignmentRecord } from './assignment.js';

/** An assignment to create. */
export interface NewAssignment {
  assignmentId: string;
  deviceId: string;
  assignmentType: AssignmentType;
  targetId: string;
  parameters?: Record<string, unknown>;
  assignedBy?: string;
}

/**
 * Assign a target to a device. The same target twice is a ConflictError; an unknown device
 * violates the foreign key (a StoreError: check the device first).
 */
export async function insertAssignment(
  h: CloudHandle,
  assignment: NewAssignment,
  now: Date,
): Promise<AssignmentRecord> {
  try {
    const row = await h.cloud
      .insertInto('device_assignments')
      .values({
        assignment_id: assignment.assignmentId,
        device_id: assignment.deviceId,
        assignment_type: assignment.assignmentType,
        target_id: assignment.targetId,
        parameters: h.codec.json(assignment.parameters ?? {}),
        assigned_by: assignment.assignedBy ?? null,
        created_at: h.codec.time(now),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return rowToAssignment(h.codec, row);
  } catch (error) {
    throw translateDriverError(
      error,
      `assign ${assignment.assignmentType} ${assignment.targetId} to ${assignment.deviceId}`,
    );
  }
}
