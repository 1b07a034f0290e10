/**
 * The purge of one retention policy, in one transaction: delete exactly the rows of its table
 * dated before `now − retention_days` (limited to its event types when it lists any; of
 * webhook_deliveries only finished ones — DELIVERED or DEAD — since a pending delivery is
 * work, not history), write an AUDIT_PURGED audit row saying how many went (when any did),
 * and stamp the policy's `last_run_at`. The deletion and its audit row commit together or
 * not at all. The table name comes from the closed set of RETENTION_TABLES through a switch,
 * never from text. Cloud tier only.
 */
import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudStore, CloudHandle } from '../../../../runtime/index.js';
import {
  retentionCutoff,
  type RetentionPolicyRecord,
  type RetentionTable,
} from './retentionPolicy.js';

/** What one policy's purge did. */
export interface RetentionPurge {
  policyId: string;
  name: string;
  tableName: RetentionTable;
  /** Rows dated before this instant were deleted. */
  cutoff: Date;
  deleted: number;
}

async function deleteOlderRows(
  h: CloudHandle,
  table: RetentionTable,
  cutoff: string,
  eventTypes: readonly string[],
): Promise<number> {
  const types = [...eventTypes];
  switch (table) {
    case 'command_audit_log': {
      let query = h.cloud.deleteFrom('command_audit_log').where('created_at', '<', cutoff);
      if (types.length > 0) query = query.where('event_type', 'in', types);
      return Number((await query.executeTakeFirst()).numDeletedRows);
    }
    case 'workflow_audit_log': {
      let query = h.db.deleteFrom('workflow_audit_log').where('timestamp', '<', cutoff);
      if (types.length > 0) query = query.where('event_type', 'in', types);
      return Number((await query.executeTakeFirst()).numDeletedRows);
    }
    case 'workflow_execution_logs': {
      const query = h.db.deleteFrom('workflow_execution_logs').where('logged_at', '<', cutoff);
      return Number((await query.executeTakeFirst()).numDeletedRows);
    }
    case 'webhook_deliveries': {
      let query = h.cloud
        .deleteFrom('webhook_deliveries')
        .where('created_at', '<', cutoff)
        .where('status', 'in', ['DELIVERED', 'DEAD']);
      if (types.length > 0) query = query.where('event_type', 'in', types);
      return Number((await query.executeTakeFirst()).numDeletedRows);
    }
    default: {
      const never: never = table;
      throw new Error(`no retention for table ${String(never)}`);
    }
  }
}

/** Enforce `policy` at `now` (see the module comment). */
export async function enforceRetentionPolicy(
  store: CloudStore,
  policy: RetentionPolicyRecord,
  actor: CommandActor,
  now: Date,
): Promise<RetentionPurge> {
  const cutoff = retentionCutoff(policy, now);
  try {
    return await store.transaction(async (tx) => {
      const deleted = await deleteOlderRows(
        tx,
        policy.tableName,
        tx.codec.time(cutoff),
        policy.eventTypes,
      );
      if (deleted > 0)
        await appendCommandAudit(
          tx,
          actor,
          [
            {
              event: 'AUDIT_PURGED',
              details: {
                policy_id: policy.policyId,
                policy: policy.name,
                table_name: policy.tableName,
                retention_days: policy.retentionDays,
                event_types: policy.eventTypes,
                cutoff: cutoff.toISOString(),
                deleted,
              },
            },
          ],
          now,
        );
      await tx.cloud
        .updateTable('audit_retention_policies')
        .set({ last_run_at: tx.codec.time(now) })
        .where('policy_id', '=', policy.policyId)
        .execute();
      return {
        policyId: policy.policyId,
        name: policy.name,
        tableName: policy.tableName,
        cutoff,
        deleted,
      };
    });
  } catch (error) {
    throw translateDriverError(error, `enforce retention policy ${policy.name}`);
  }
}
