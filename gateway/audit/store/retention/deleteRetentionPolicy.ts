import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Delete a policy, with a RETENTION_POLICY_DELETED audit row; false when there is none. Run
 * it in a transaction.
 */
export async function deleteRetentionPolicy(
  h: CloudHandle,
  policyId: string,
  actor: CommandActor,
  now: Date,
): Promise<boolean> {
  let name: string | undefined;
  try {
    const row = await h.cloud
      .deleteFrom('audit_retention_policies')
      .where('policy_id', '=', policyId)
      .returning(['name', 'table_name'])
      .executeTakeFirst();
    if (!row) return false;
    name = row.name;
  } catch (error) {
    throw translateDriverError(error, `delete retention policy ${policyId}`);
  }
  await appendCommandAudit(
    h,
    actor,
    [{ event: 'RETENTION_POLICY_DELETED', details: { policy_id: policyId, name } }],
    now,
  );
  return true;
}
