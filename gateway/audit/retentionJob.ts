/**
 * The scheduled audit purge of one gateway: every `intervalMs` (first after
 * `initialDelayMs`) it enforces each enabled retention policy
 * (gateway/audit/store/retention/enforceRetentionPolicy.ts: one transaction per policy, deletion
 * and its AUDIT_PURGED audit row together). Once per cluster: on PostgreSQL the pass runs
 * under the advisory lock `saffron:audit-retention`, so one gateway at a time does it, and a
 * scheduled pass skips a policy another gateway already ran within the interval
 * (`last_run_at`) — N gateways still purge once per interval, not N times. On PGlite (one
 * process) passes are serialized in-process. An operator's purge (`POST /api/v1/audit/purge`)
 * runs every enabled policy at once, under the same lock.
 */
import { createBackgroundLoop, toError, withAdvisoryLock } from '../../runtime/index.js';
import {
  enforceRetentionPolicy,
  listRetentionPolicies,
  type RetentionPurge,
} from './store/retention/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import type { GatewayContext } from '../context.js';

/** Options of the retention job. */
export interface RetentionJobOptions {
  /** Period of the scheduled purge (default 1 h). */
  intervalMs?: number;
  /** Delay of the first scheduled purge after start (default 60 s). */
  initialDelayMs?: number;
}

/** What a pass did to one policy: its purge, or why it failed. */
export type RetentionResult = RetentionPurge | { policyId: string; name: string; error: string };

/** The retention job of one gateway. */
export interface RetentionJob {
  /**
   * Enforce the enabled policies now as `actor`; `scheduled` skips those run within the
   * interval. Undefined when another gateway holds the cluster lock.
   */
  run(
    actor: CommandActor,
    options?: { scheduled?: boolean },
  ): Promise<RetentionResult[] | undefined>;
  /** Start the schedule. */
  start(): void;
  /** Stop, and wait for a pass in progress. */
  close(): Promise<void>;
}

/** The actor of scheduled purges in the audit log. */
export const RETENTION_ACTOR: CommandActor = { actor: 'retention', role: 'system' };

/** Create the retention job of `ctx`'s gateway. */
export function createRetentionJob(
  ctx: GatewayContext,
  options: RetentionJobOptions = {},
): RetentionJob {
  const intervalMs = options.intervalMs ?? 3_600_000;
  const log = ctx.app.log;
  let chain: Promise<unknown> = Promise.resolve();
  let closed = false;

  const pass = async (actor: CommandActor, scheduled: boolean): Promise<RetentionResult[]> => {
    const now = ctx.now();
    const results: RetentionResult[] = [];
    for (const policy of await listRetentionPolicies(ctx.store, { enabledOnly: true })) {
      if (scheduled && policy.lastRunAt && now.getTime() - policy.lastRunAt.getTime() < intervalMs)
        continue;
      try {
        results.push(await enforceRetentionPolicy(ctx.store, policy, actor, now));
      } catch (error) {
        log.error({ err: error, policy: policy.name }, 'an audit retention purge failed');
        results.push({
          policyId: policy.policyId,
          name: policy.name,
          error: toError(error).message,
        });
      }
    }
    return results;
  };

  const run: RetentionJob['run'] = (actor, runOptions = {}) => {
    const scheduled = runOptions.scheduled ?? false;
    const driver = ctx.store.driver;
    const work = () =>
      driver.dialect === 'postgres'
        ? withAdvisoryLock(driver.pool, 'saffron:audit-retention', () => pass(actor, scheduled))
        : pass(actor, scheduled);
    // one pass at a time in this process too
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };

  const schedule = createBackgroundLoop({
    intervalMs,
    firstDelayMs: options.initialDelayMs ?? 60_000,
    pass: () => run(RETENTION_ACTOR, { scheduled: true }),
    onError: (error) => log.error({ err: error }, 'the scheduled audit retention pass failed'),
  });

  return {
    run,
    start() {
      if (!closed) schedule.start();
    },
    async close() {
      closed = true;
      await schedule.stop();
      await chain;
    },
  };
}
