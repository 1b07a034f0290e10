import { appendCommandAudit } from '../../../commands/store/commands/appendCommandAudit.js';
import type { CommandActor } from '../../../commands/store/commands/command.js';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  RATE_LIMIT_RULE_COLUMNS,
  rateLimitRuleColumns,
  rowToRateLimitRule,
  type RateLimitRuleFields,
  type RateLimitRuleRecord,
} from './rateLimitRule.js';

/**
 * Create a rule with a RATE_LIMIT_RULE_CREATED audit row; an existing name is a
 * ConflictError. Call inside a transaction.
 */
export async function insertRateLimitRule(
  h: CloudHandle,
  ruleId: string,
  fields: RateLimitRuleFields,
  actor: CommandActor,
  now: Date,
): Promise<RateLimitRuleRecord> {
  try {
    const at = h.codec.time(now);
    const row = await h.cloud
      .insertInto('rate_limit_rules')
      .values({
        rule_id: ruleId,
        ...rateLimitRuleColumns(h.codec, fields),
        created_at: at,
        updated_at: at,
      })
      .returning(RATE_LIMIT_RULE_COLUMNS)
      .executeTakeFirstOrThrow();
    const record = rowToRateLimitRule(h.codec, row);
    await appendCommandAudit(
      h,
      actor,
      [{ event: 'RATE_LIMIT_RULE_CREATED', details: ruleDetails(record) }],
      now,
    );
    return record;
  } catch (error) {
    throw translateDriverError(error, `create rate-limit rule ${fields.name}`);
  }
}

/** What an audit row says about a rule. */
export const ruleDetails = (rule: RateLimitRuleRecord): Record<string, unknown> => ({
  rule_id: rule.ruleId,
  name: rule.name,
  scope: rule.scope,
  route_pattern: rule.routePattern,
  max_requests: rule.maxRequests,
  window_seconds: rule.windowSeconds,
  burst: rule.burst,
  enabled: rule.enabled,
});
