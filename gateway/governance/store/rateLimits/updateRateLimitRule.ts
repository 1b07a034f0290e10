import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import { ruleDetails } from './insertRateLimitRule.js';
import {
  RATE_LIMIT_RULE_COLUMNS,
  rateLimitRuleColumns,
  rowToRateLimitRule,
  type RateLimitRuleFields,
  type RateLimitRuleRecord,
} from './rateLimitRule.js';

/**
 * Replace the fields of rule `ruleId` with a RATE_LIMIT_RULE_UPDATED audit row; undefined
 * when there is none. A changed window length starts its counting afresh (counters are kept
 * per window start). Call inside a transaction.
 */
export async function updateRateLimitRule(
  h: CloudHandle,
  ruleId: string,
  fields: RateLimitRuleFields,
  actor: CommandActor,
  now: Date,
): Promise<RateLimitRuleRecord | undefined> {
  try {
    const row = await h.cloud
      .updateTable('rate_limit_rules')
      .set({ ...rateLimitRuleColumns(h.codec, fields), updated_at: h.codec.time(now) })
      .where('rule_id', '=', ruleId)
      .returning(RATE_LIMIT_RULE_COLUMNS)
      .executeTakeFirst();
    if (!row) return undefined;
    const record = rowToRateLimitRule(h.codec, row);
    await appendCommandAudit(
      h,
      actor,
      [{ event: 'RATE_LIMIT_RULE_UPDATED', details: ruleDetails(record) }],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(error, `update rate-limit rule ${ruleId}`);
  }
}
