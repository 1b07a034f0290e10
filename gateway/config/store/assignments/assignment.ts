/**
 * What a device is assigned: workflows, policies (by name), configuration and WASM
 * components (by binary hash). A device has each target at most once per type.
 */
import type { AssignmentType, Codec } from '../../../../runtime/index.js';

/** An assignment. */
export interface AssignmentRecord {
  assignmentId: string;
  deviceId: string;
  assignmentType: AssignmentType;
  targetId: string;
  parameters: Record<string, unknown>;
  active: boolean;
  assignedBy: string | null;
  createdAt: Date;
}

/** A device_assignments row. */
export interface AssignmentRow {
  assignment_id: string;
  device_id: string;
  assignment_type: string;
  target_id: string;
  parameters: unknown;
  active: boolean | number;
  assigned_by: string | null;
  created_at: unknown;
}

/** Decode an assignment row. */
export function rowToAssignment(codec: Codec, row: AssignmentRow): AssignmentRecord {
  const parameters = codec.parseJson(row.parameters);
  return {
    assignmentId: row.assignment_id,
    deviceId: row.device_id,
    assignmentType: row.assignment_type as AssignmentType,
    targetId: row.target_id,
    parameters:
      parameters !== null && typeof parameters === 'object' && !Array.isArray(parameters)
        ? (parameters as Record<string, unknown>)
        : {},
    active: codec.parseBool(row.active),
    assignedBy: row.assigned_by,
    createdAt: codec.parseTime(row.created_at),
  };
}
