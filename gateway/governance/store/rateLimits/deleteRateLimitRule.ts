import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';

/**
 * Delete rule `ruleId` and its counters, with a RATE_LIMIT_RULE_DELETED audit row; false when
 * there is none. Call inside a transaction.
 */
export async function deleteRateLimitRule(
  h: CloudHandle,
  ruleId: string,
  actor: CommandActor,
  now: Date,
): Promise<boolean> {
  try {
    await h.cloud.deleteFrom('rate_limit_tracking').where('rule_id', '=', ruleId).execute();
    const row = await h.cloud
      .deleteFrom('rate_limit_rules')
      .where('rule_id', '=', ruleId)
      .returning(['rule_id', 'name'])
      .executeTakeFirst();
    if (!row) return false;
    await appendCommandAudit(
      h,
      actor,
      [{ event: 'RATE_LIMIT_RULE_DELETED', details: { rule_id: row.rule_id, name: row.name } }],
      now,
    );
    return true;
  } catch (error) {
    throw translateDriverError(error, `delete rate-limit rule ${ruleId}`);
  }
}
