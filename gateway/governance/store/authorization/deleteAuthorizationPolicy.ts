import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Delete policy `policyId` with an AUTHORIZATION_POLICY_DELETED audit row; false when there
 * is none. Approvals it required stay (their `policy_id` becomes null) and keep their terms.
 * Call inside a transaction.
 */
export async function deleteAuthorizationPolicy(
  h: CloudHandle,
  policyId: string,
  actor: CommandActor,
  now: Date,
): Promise<boolean> {
  try {
    const row = await h.cloud
      .deleteFrom('authorization_policies')
      .where('policy_id', '=', policyId)
      .returning(['policy_id', 'name'])
      .executeTakeFirst();
    if (!row) return false;
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'AUTHORIZATION_POLICY_DELETED',
          details: { policy_id: row.policy_id, name: row.name },
        },
      ],
      now,
    );
    return true;
  } catch (error) {
    throw translateDriverError(error, `delete authorization policy ${policyId}`);
  }
}
