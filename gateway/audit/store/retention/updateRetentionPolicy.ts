import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  RETENTION_POLICY_COLUMNS,
  rowToRetentionPolicy,
  type RetentionPolicyRecord,
} from './retentionPolicy.js';

/** What may change on a policy; absent fields stay. */
export interface RetentionPolicyChanges {
  retentionDays?: number;
  eventTypes?: readonly string[];
  enabled?: boolean;
}

/**
 * Change a policy, with a RETENTION_POLICY_UPDATED audit row naming what changed; undefined
 * when there is none. Run it in a transaction.
 */
export async function updateRetentionPolicy(
  h: CloudHandle,
  policyId: string,
  changes: RetentionPolicyChanges,
  actor: CommandActor,
  now: Date,
): Promise<RetentionPolicyRecord | undefined> {
  let updated: RetentionPolicyRecord | undefined;
  try {
    const row = await h.cloud
      .updateTable('audit_retention_policies')
      .set({
        ...(changes.retentionDays !== undefined ? { retention_days: changes.retentionDays } : {}),
        ...(changes.eventTypes !== undefined
          ? { event_types: h.codec.json(changes.eventTypes) }
          : {}),
        ...(changes.enabled !== undefined ? { enabled: h.codec.bool(changes.enabled) } : {}),
        updated_at: h.codec.time(now),
      })
      .where('policy_id', '=', policyId)
      .returning(RETENTION_POLICY_COLUMNS)
      .executeTakeFirst();
    updated = row && rowToRetentionPolicy(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `update retention policy ${policyId}`);
  }
  if (!updated) return undefined;
  await appendCommandAudit(
    h,
    actor,
    [
      {
        event: 'RETENTION_POLICY_UPDATED',
        details: {
          policy_id: policyId,
          name: updated.name,
          changed: Object.keys(changes).filter(
            (k) => changes[k as keyof RetentionPolicyChanges] !== undefined,
          ),
          retention_days: updated.retentionDays,
          event_types: updated.eventTypes,
          enabled: updated.enabled,
        },
      },
    ],
    now,
  );
  return updated;
}
