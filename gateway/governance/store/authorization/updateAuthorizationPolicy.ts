import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  AUTHORIZATION_POLICY_COLUMNS,
  authorizationPolicyColumns,
  rowToAuthorizationPolicy,
  type AuthorizationPolicyFields,
  type AuthorizationPolicyRecord,
} from './authorizationPolicy.js';

/**
 * Replace the fields of policy `policyId`, with an AUTHORIZATION_POLICY_UPDATED audit row
 * naming what changed; undefined when there is no such policy. Approvals already requested
 * keep the terms they were requested under. Call inside a transaction.
 */
export async function updateAuthorizationPolicy(
  h: CloudHandle,
  policyId: string,
  fields: AuthorizationPolicyFields,
  changed: readonly string[],
  actor: CommandActor,
  now: Date,
): Promise<AuthorizationPolicyRecord | undefined> {
  try {
    const row = await h.cloud
      .updateTable('authorization_policies')
      .set({ ...authorizationPolicyColumns(h.codec, fields), updated_at: h.codec.time(now) })
      .where('policy_id', '=', policyId)
      .returning(AUTHORIZATION_POLICY_COLUMNS)
      .executeTakeFirst();
    if (!row) return undefined;
    const record = rowToAuthorizationPolicy(h.codec, row);
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'AUTHORIZATION_POLICY_UPDATED',
          details: { policy_id: record.policyId, name: record.name, changed },
        },
      ],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(error, `update authorization policy ${policyId}`);
  }
}
