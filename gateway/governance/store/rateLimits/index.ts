/** Rate limits: rules (rate_limit_rules) and their shared counters (rate_limit_tracking). */
export {
  RATE_LIMIT_SCOPES,
  type RateLimitRuleFields,
  type RateLimitRuleRecord,
  type RateLimitScope,
} from './rateLimitRule.js';
export { insertRateLimitRule } from './insertRateLimitRule.js';
export { updateRateLimitRule } from './updateRateLimitRule.js';
export { deleteRateLimitRule } from './deleteRateLimitRule.js';
export { getRateLimitRule, listRateLimitRules } from './listRateLimitRules.js';
export { listRateLimitUsage, reserveRateLimit, returnRateLimit } from './reserveRateLimit.js';
export { purgeRateLimitTracking } from './purgeRateLimitTracking.js';
