/**
 * The rate-limit rule record: at most `max_requests` requests per fixed window of
 * `window_seconds`, counted per subject — each device (`device`), each API token
 * (`api_key`), each operator name (`user`) or everyone together (`global`) — over the
 * requests matching `route_pattern` (method and path template; the gateway owns its
 * syntax). `burst`, when set, also caps each subject at that many requests per second
 * (fixed one-second windows), so a long window's budget cannot be spent in one spike. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** Subjects a rule counts per (rate_limit_rules.scope). */
export const RATE_LIMIT_SCOPES = ['device', 'api_key', 'user', 'global'] as const;
/** A rate-limit scope. */
export type RateLimitScope = (typeof RATE_LIMIT_SCOPES)[number];

/** The columns a rule read returns. */
export const RATE_LIMIT_RULE_COLUMNS = [
  'rule_id',
  'name',
  'scope',
  'route_pattern',
  'max_requests',
  'window_seconds',
  'burst',
  'enabled',
  'created_at',
  'updated_at',
] as const;

/** A rate-limit rule. */
export interface RateLimitRuleRecord {
  ruleId: string;
  name: string;
  scope: RateLimitScope;
  routePattern: string;
  maxRequests: number;
  windowSeconds: number;
  /** Most requests per second per subject, or null for no such cap. */
  burst: number | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A rule row as selected with {@link RATE_LIMIT_RULE_COLUMNS}. */
export interface RateLimitRuleRow {
  rule_id: string;
  name: string;
  scope: string;
  route_pattern: string;
  max_requests: number | string;
  window_seconds: number | string;
  burst: number | string | null;
  enabled: unknown;
  created_at: unknown;
  updated_at: unknown;
}

/** Decode a rule row. */
export function rowToRateLimitRule(codec: Codec, row: RateLimitRuleRow): RateLimitRuleRecord {
  return {
    ruleId: row.rule_id,
    name: row.name,
    scope: row.scope as RateLimitScope,
    routePattern: row.route_pattern,
    maxRequests: codec.parseInt(row.max_requests),
    windowSeconds: codec.parseInt(row.window_seconds),
    burst: row.burst === null ? null : codec.parseInt(row.burst),
    enabled: codec.parseBool(row.enabled),
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
  };
}

/** The columns `fields` set (insert and update alike). */
export function rateLimitRuleColumns(codec: Codec, fields: RateLimitRuleFields) {
  return {
    name: fields.name,
    scope: fields.scope,
    route_pattern: fields.routePattern,
    max_requests: fields.maxRequests,
    window_seconds: fields.windowSeconds,
    burst: fields.burst,
    enabled: codec.bool(fields.enabled),
  };
}

/** The settable fields of a rule. */
export interface RateLimitRuleFields {
  name: string;
  scope: RateLimitScope;
  routePattern: string;
  maxRequests: number;
  windowSeconds: number;
  burst: number | null;
  enabled: boolean;
}
