import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  RATE_LIMIT_RULE_COLUMNS,
  rowToRateLimitRule,
  type RateLimitRuleRecord,
} from './rateLimitRule.js';

/** Rate-limit rules by name (at most 1000), or only the enabled ones. */
export async function listRateLimitRules(
  h: CloudHandle,
  options: { enabledOnly?: boolean } = {},
): Promise<RateLimitRuleRecord[]> {
  try {
    let query = h.cloud.selectFrom('rate_limit_rules').select(RATE_LIMIT_RULE_COLUMNS);
    if (options.enabledOnly) query = query.where('enabled', '=', h.codec.bool(true));
    const rows = await query.orderBy('name').limit(1000).execute();
    return rows.map((row) => rowToRateLimitRule(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'list rate-limit rules');
  }
}

/** One rule, or undefined. */
export async function getRateLimitRule(
  h: CloudHandle,
  ruleId: string,
): Promise<RateLimitRuleRecord | undefined> {
  try {
    const row = await h.cloud
      .selectFrom('rate_limit_rules')
      .select(RATE_LIMIT_RULE_COLUMNS)
      .where('rule_id', '=', ruleId)
      .executeTakeFirst();
    return row && rowToRateLimitRule(h.codec, row);
  } catch (error) {
    throw translateDriverError(error, `read rate-limit rule ${ruleId}`);
  }
}
