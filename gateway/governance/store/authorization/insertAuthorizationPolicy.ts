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
 * Create an authorization policy with an AUTHORIZATION_POLICY_CREATED audit row; an
 * existing name is a ConflictError. Call inside a transaction.
 */
export async function insertAuthorizationPolicy(
  h: CloudHandle,
  policyId: string,
  fields: AuthorizationPolicyFields,
  actor: CommandActor,
  now: Date,
): Promise<AuthorizationPolicyRecord> {
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .insertInto('authorization_policies')
      .values({
        policy_id: policyId,
        ...authorizationPolicyColumns(h.codec, fields),
        created_at: at,
        updated_at: at,
      })
      .returning(AUTHORIZATION_POLICY_COLUMNS)
      .executeTakeFirstOrThrow();
    const record = rowToAuthorizationPolicy(h.codec, row);
    await appendCommandAudit(
      h,
      actor,
      [
        {
          event: 'AUTHORIZATION_POLICY_CREATED',
          details: { policy_id: record.policyId, name: record.name },
        },
      ],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(error, `create authorization policy ${fields.name}`);
  }
}
