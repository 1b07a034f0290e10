import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { rowToRoleAssignment, type RoleAssignmentRecord } from './role.js';

/**
 * Take back a role assignment, with a ROLE_UNASSIGNED audit row; undefined when there is no
 * such assignment. Call inside a transaction.
 */
export async function deleteRoleAssignment(
  h: CloudHandle,
  assignmentId: string,
  actor: CommandActor,
  now: Date,
): Promise<RoleAssignmentRecord | undefined> {
  try {
    const row = await h.cloud
      .deleteFrom('role_assignments')
      .where('assignment_id', '=', assignmentId)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const record = rowToRoleAssignment(h.codec, row);
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'ROLE_UNASSIGNED',
          details: {
            assignment_id: record.assignmentId,
            principal_type: record.principalType,
            principal_id: record.principalId,
            role_name: record.roleName,
          },
        },
      ],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(error, `delete role assignment ${assignmentId}`);
  }
}
