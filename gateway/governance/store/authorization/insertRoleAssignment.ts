import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToRoleAssignment, type PrincipalType, type RoleAssignmentRecord } from './role.js';

/** A role assignment to create. */
export interface NewRoleAssignment {
  assignmentId: string;
  principalType: PrincipalType;
  principalId: string;
  roleName: string;
  scope: Record<string, unknown>;
  expiresAt: Date | null;
}

/**
 * Give a principal a role, with a ROLE_ASSIGNED audit row. The same role twice for one
 * principal is a ConflictError; an unknown role violates the foreign key (the caller checks
 * it first). Call inside a transaction.
 */
export async function insertRoleAssignment(
  h: CloudHandle,
  assignment: NewRoleAssignment,
  actor: CommandActor,
  now: Date,
): Promise<RoleAssignmentRecord> {
  try {
    const row = await h.cloud
      .insertInto('role_assignments')
      .values({
        assignment_id: assignment.assignmentId,
        principal_type: assignment.principalType,
        principal_id: assignment.principalId,
        role_name: assignment.roleName,
        scope: h.codec.json(assignment.scope),
        granted_by: actor.actor,
        created_at: h.codec.time(now),
        expires_at: assignment.expiresAt ? h.codec.time(assignment.expiresAt) : null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const record = rowToRoleAssignment(h.codec, row);
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'ROLE_ASSIGNED',
          details: {
            assignment_id: record.assignmentId,
            principal_type: record.principalType,
            principal_id: record.principalId,
            role_name: record.roleName,
            scope: record.scope,
            expires_at: record.expiresAt?.toISOString() ?? null,
          },
        },
      ],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(
      error,
      `assign role ${assignment.roleName} to ${assignment.principalType} ${assignment.principalId}`,
    );
  }
}
