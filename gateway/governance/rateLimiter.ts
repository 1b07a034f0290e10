/**
 * Rate limits (rate_limit_rules), enforced on every authenticated request by every gateway
 * sharing the database.
 *
 * Counting: fixed windows aligned to the epoch (`window_seconds`), one shared counter per
 * rule, subject and window in rate_limit_tracking. A rule with a `burst` is also enforced
 * as a one-second window of `burst` requests, counted the same way under its own subject key
 * (`…#burst`), so a day's budget cannot all arrive in one second. A gateway does not write per request: it
 * reserves a slice of the window's budget with one atomic upsert (reserveRateLimit.ts) and
 * spends it locally. The slice is `reserveFraction` of the limit (at least 1, at most
 * `maxReserve`), shrinking to a quarter of what is left as the window's budget runs low; a
 * gateway that learns the budget is spent refuses locally until the window ends, without
 * further writes. So a limit of 1,000/minute costs a gateway about one write per 50
 * requests, and a small limit (≤ 1/fraction) is counted exactly, one write per request.
 *
 * Consistency guaranteed, across any number of gateways:
 * - never more than `max_requests` requests of a subject are admitted in one window: a
 *   reservation adds its whole slice first and is granted only the part that lies below the
 *   limit, then returns what it was not granted — so the counter is never below what was
 *   granted, and a racing reservation that sees it high is refused, never over-granted;
 * - a request may be refused while fewer were admitted, by at most the unspent slices other
 *   gateways hold (each at most the current slice size, and only until their window ends);
 * - rule changes reach this gateway at once and the others within `ruleRefreshMs`.
 * A request refused by one rule still counts against the other rules that admitted it.
 *
 * Answers: 429 RATE_LIMITED problem+json with `Retry-After` (seconds to the window's end);
 * admitted requests carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
 * (seconds) of the most restrictive rule that applies. Requests no rule covers carry no
 * headers and cost nothing. An admin's requests to `/api/v1/rate-limits` are never limited,
 * so a rule written by mistake can always be undone. Public routes (device registration by
 * registration key, the OpenAPI document) have no caller to count per: `global`
 * rules count them, so registration-key guessing can be capped; the health probes are never
 * limited.
 *
 * Why not a fastify `onRequest` hook: the subject is the authenticated caller, and a device
 * is only known once its signature — over the body, with a nonce accepted once — is checked;
 * counting an unverified `Authorization` header would let anyone spend a device's budget.
 * Enforcement runs right after authentication (route.ts), before anything else the request
 * does.
 */
import { createHash } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import { createBackgroundLoop, type CloudStore } from '../../runtime/index.js';
import {
  listRateLimitRules,
  purgeRateLimitTracking,
  reserveRateLimit,
  returnRateLimit,
  type RateLimitRuleRecord,
} from './store/rateLimits/index.js';
import type { Principal } from '../auth/principal.js';
import { Problem } from '../problem.js';
import { matchesRoute, parseRoutePattern, type RoutePattern } from './routePattern.js';

/** Options of {@link createRateLimiter}. */
export interface RateLimitOptions {
  /** How long a gateway uses its copy of the rules before reading them again (default 5 s). */
  ruleRefreshMs?: number;
  /** Share of a rule's limit reserved per database write (default 0.05). */
  reserveFraction?: number;
  /** Largest slice reserved at once (default 100). */
  maxReserve?: number;
  /** How often expired counters are deleted (default 60 s). */
  purgeIntervalMs?: number;
}

/** What the limiter needs. */
export interface RateLimiterDeps {
  store: CloudStore;
  now: () => Date;
  metrics: Registry;
  onError: (error: unknown) => void;
}

/** What the limiter reads of a request (a fastify request is one). */
export interface LimitedRequest {
  method: string;
  /** The path and query as received. */
  url: string;
  /** The matched route's template (`/api/v1/devices/:id`), if any. */
  routeOptions: { url?: string | undefined };
}

/** Where the limiter sets its `ratelimit-*` headers (a fastify reply is one). */
export interface LimitedReply {
  header(name: string, value: string): unknown;
}

/** The rate limiter of one gateway. */
export interface RateLimiter {
  /**
   * Count the request; throws a 429 problem when a rule refuses it, else sets the headers.
   * `principal` is undefined on a public route: only `global` rules count those.
   */
  enforce(
    principal: Principal | undefined,
    request: LimitedRequest,
    reply: LimitedReply,
  ): Promise<void>;
  /** Read the rules again on the next request (after a change through this gateway). */
  invalidate(): void;
  /** Delete expired counters now (joins a purge in progress); returns how many went. */
  purge(): Promise<number>;
  /** Stop the periodic purge; resolves once no purge runs. */
  close(): Promise<void>;
}

interface Rule extends RateLimitRuleRecord {
  pattern: RoutePattern;
  /** The per-second cap of a rule with a `burst`: counted apart, under the same rule id. */
  isBurst: boolean;
}

/**
 * A rule as enforced: its per-second cap first when it has a burst — so a request the burst
 * refuses does not spend the window's budget — then itself.
 */
function enforcedRules(record: RateLimitRuleRecord): Rule[] {
  const rule = { ...record, pattern: parseRoutePattern(record.routePattern), isBurst: false };
  if (record.burst === null) return [rule];
  return [{ ...rule, maxRequests: record.burst, windowSeconds: 1, isBurst: true }, rule];
}

interface Slot {
  windowStart: number;
  /** Reserved and not yet spent here. */
  tokens: number;
  /** The shared counter's total when this gateway last reserved. */
  counter: number;
  /** The window's budget is spent: refuse without asking the database. */
  exhausted: boolean;
  pending?: Promise<void> | undefined;
}

interface Verdict {
  rule: Rule;
  admitted: boolean;
  remaining: number;
  resetSeconds: number;
}

const ADMIN_ROUTES = '/api/v1/rate-limits';

/** Public routes no rule limits: health probes must answer however busy the API is. */
const PROBES = new Set(['/healthz', '/readyz']);

/** The counting subject of `principal` under `rule`, or undefined when the rule is not for it. */
function subjectOf(rule: Rule, principal: Principal | undefined): string | undefined {
  if (principal === undefined) return rule.scope === 'global' ? 'global' : undefined;
  switch (rule.scope) {
    case 'device':
      return principal.kind === 'device' ? `device:${principal.deviceId}` : undefined;
    case 'api_key':
      return principal.kind === 'user' ? `token:${principal.tokenId}` : undefined;
    case 'user': {
      if (principal.kind !== 'user') return undefined;
      const key = `user:${principal.name}`;
      return key.length <= 190 // room for the `#burst` suffix (subject_key is 200)
        ? key
        : `user#${createHash('sha256').update(principal.name).digest('hex')}`;
    }
    case 'global':
      return 'global';
    default:
      return undefined;
  }
}

/** Create the limiter of one gateway. */
export function createRateLimiter(
  deps: RateLimiterDeps,
  options: RateLimitOptions = {},
): RateLimiter {
  const refreshMs = options.ruleRefreshMs ?? 5000;
  const fraction = options.reserveFraction ?? 0.05;
  const maxReserve = Math.max(1, options.maxReserve ?? 100);
  const slots = new Map<string, Slot>();
  let rules: { list: Rule[]; loadedAt: number } | undefined;
  let loading: Promise<Rule[]> | undefined;
  let generation = 0;

  const reservations = new Counter({
    name: 'saffron_rate_limit_reservations_total',
    help: 'rate-limit budget reservations written to the database (each covers many requests)',
    registers: [deps.metrics],
  });
  const refused = new Counter({
    name: 'saffron_rate_limit_refused_total',
    help: 'requests refused by a rate-limit rule',
    labelNames: ['rule'],
    registers: [deps.metrics],
  });

  const loadRules = async (): Promise<Rule[]> => {
    if (rules && Date.now() - rules.loadedAt < refreshMs) return rules.list;
    if (!loading) {
      const started = generation;
      loading = listRateLimitRules(deps.store, { enabledOnly: true })
        .then((records) => {
          const list = records.flatMap(enforcedRules);
          if (started === generation) rules = { list, loadedAt: Date.now() };
          return list;
        })
        .finally(() => (loading = undefined));
    }
    return loading;
  };

  const sliceOf = (rule: Rule, slot: Slot): number => {
    const base = Math.min(maxReserve, Math.max(1, Math.floor(rule.maxRequests * fraction)));
    if (slot.counter === 0) return base;
    return Math.min(base, Math.max(1, Math.floor((rule.maxRequests - slot.counter) / 4)));
  };

  const take = async (rule: Rule, subject: string, nowMs: number): Promise<Verdict | undefined> => {
    const windowMs = rule.windowSeconds * 1000;
    const windowStart = Math.floor(nowMs / windowMs) * windowMs;
    // a changed rule starts afresh here (a raised limit is not refused from a stale slot)
    const key = `${rule.ruleId}\u0000${rule.maxRequests}\u0000${subject}`;
    const verdict = (slot: Slot, admitted: boolean): Verdict => ({
      rule,
      admitted,
      remaining: Math.min(
        rule.maxRequests,
        Math.max(0, rule.maxRequests - slot.counter) + slot.tokens,
      ),
      resetSeconds: Math.max(1, Math.ceil((windowStart + windowMs - nowMs) / 1000)),
    });
    for (;;) {
      let slot = slots.get(key);
      if (!slot || slot.windowStart !== windowStart) {
        slot = { windowStart, tokens: 0, counter: 0, exhausted: false };
        slots.set(key, slot);
      }
      if (slot.tokens > 0) {
        slot.tokens--;
        return verdict(slot, true);
      }
      if (slot.exhausted) return verdict(slot, false);
      if (slot.pending) {
        await slot.pending;
        continue;
      }
      const current = slot;
      const amount = sliceOf(rule, current);
      let gone = false;
      const counter = {
        ruleId: rule.ruleId,
        subjectKey: subject,
        windowStart: new Date(windowStart),
      };
      current.pending = reserveRateLimit(deps.store, counter, amount, deps.now())
        .then(async (total) => {
          reservations.inc();
          if (total === undefined) {
            gone = true; // deleted by another gateway: stop applying it
            return;
          }
          const granted = Math.min(amount, Math.max(0, rule.maxRequests - (total - amount)));
          current.tokens += granted;
          current.counter = Math.max(current.counter, total - (amount - granted));
          if (granted < amount) {
            current.exhausted = true;
            await returnRateLimit(deps.store, counter, amount - granted, deps.now());
          }
        })
        .finally(() => (current.pending = undefined));
      await current.pending;
      if (gone) {
        invalidate();
        return undefined;
      }
    }
  };

  const invalidate = () => {
    generation++;
    rules = undefined;
  };

  const prune = (nowMs: number) => {
    for (const [key, slot] of slots) {
      const [ruleId, max] = key.split('\u0000');
      const rule = rules?.list.find((r) => r.ruleId === ruleId && String(r.maxRequests) === max);
      if (!rule || slot.windowStart + rule.windowSeconds * 1000 <= nowMs) slots.delete(key);
    }
  };

  const purge = async () => {
    const now = deps.now();
    prune(now.getTime());
    let total = 0;
    for (;;) {
      const deleted = await purgeRateLimitTracking(deps.store, now);
      total += deleted;
      if (deleted < 10_000) return total;
    }
  };

  // one purge at a time, on unref'd timers: the purge never keeps a gateway alive
  const purges = createBackgroundLoop({
    intervalMs: options.purgeIntervalMs ?? 60_000,
    pass: purge,
    onError: deps.onError,
  });
  purges.start();

  return {
    async enforce(principal, request, reply) {
      const list = await loadRules();
      if (list.length === 0) return;
      const template = request.routeOptions.url ?? request.url.split('?')[0]!;
      if (principal === undefined && PROBES.has(template)) return;
      if (
        principal?.kind === 'user' &&
        principal.role === 'admin' &&
        (template === ADMIN_ROUTES || template.startsWith(`${ADMIN_ROUTES}/`))
      )
        return;
      const routed = { method: request.method, template, path: request.url.split('?')[0]! };
      const nowMs = deps.now().getTime();
      let tightest: Verdict | undefined;
      for (const rule of list) {
        const subject = subjectOf(rule, principal);
        if (subject === undefined || !matchesRoute(rule.pattern, routed)) continue;
        const verdict = await take(rule, rule.isBurst ? `${subject}#burst` : subject, nowMs);
        if (!verdict) continue;
        if (!verdict.admitted) {
          refused.inc({ rule: rule.name });
          throw new Problem(
            429,
            'RATE_LIMITED',
            rule.isBurst
              ? `rate limit '${rule.name}' allows bursts of ${rule.maxRequests} requests per second; retry in ${verdict.resetSeconds} s`
              : `rate limit '${rule.name}' allows ${rule.maxRequests} requests per ${rule.windowSeconds} s; retry in ${verdict.resetSeconds} s`,
            {
              rule: rule.name,
              limit: rule.maxRequests,
              window_seconds: rule.windowSeconds,
              ...(rule.isBurst ? { burst: true } : {}),
            },
            {
              'retry-after': String(verdict.resetSeconds),
              'ratelimit-limit': String(rule.maxRequests),
              'ratelimit-remaining': '0',
              'ratelimit-reset': String(verdict.resetSeconds),
            },
          );
        }
        if (!tightest || verdict.remaining < tightest.remaining) tightest = verdict;
      }
      if (tightest) {
        void reply.header('ratelimit-limit', String(tightest.rule.maxRequests));
        void reply.header('ratelimit-remaining', String(tightest.remaining));
        void reply.header('ratelimit-reset', String(tightest.resetSeconds));
      }
    },
    invalidate,
    purge: () => purges.runNow(),
    close: () => purges.stop(),
  };
}
