import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  RETENTION_POLICY_COLUMNS,
  rowToRetentionPolicy,
  type RetentionPolicyRecord,
  type RetentionTable,
} from './retentionPolicy.js';

/** A policy to create. */
export interface NewRetentionPolicy {
  policyId: string;
  name: string;
  tableName: RetentionTable;
  retentionDays: number;
  eventTypes: readonly string[];
  enabled: boolean;
}

/**
 * Create a retention policy with its RETENTION_POLICY_CREATED audit row; run it in a
 * transaction. A taken name is a ConflictError.
 */
export async function insertRetentionPolicy(
  h: CloudHandle,
  policy: NewRetentionPolicy,
  actor: CommandActor,
  now: Date,
): Promise<RetentionPolicyRecord> {
  let created: RetentionPolicyRecord;
  try {
    const row = await h.cloud
      .insertInto('audit_retention_policies')
      .values({
        policy_id: policy.policyId,
        name: policy.name,
        table_name: policy.tableName,
        retention_days: policy.retentionDays,
        event_types: h.codec.json(policy.eventTypes),
        enabled: h.codec.bool(policy.enabled),
        created_at: h.codec.time(now),
        updated_at: h.codec.time(now),
      })
      .returning(RETENTION_POLICY_COLUMNS)
      .executeTakeFirstOrThrow();
    created = rowToRetentionPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `create retention policy ${policy.name}`);
  }
  await appendCommandAudit(
    h,
    actor,
    [
      {
        event: 'RETENTION_POLICY_CREATED',
        details: {
          policy_id: created.policyId,
          name: created.name,
          table_name: created.tableName,
          retention_days: created.retentionDays,
          event_types: created.eventTypes,
          enabled: created.enabled,
        },
      },
    ],
    now,
  );
  return created;
}
