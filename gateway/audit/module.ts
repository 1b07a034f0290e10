/**
 * Audit and retention: the command audit log's query and export routes
 * (gateway/audit/routes.ts), retention policies and the purge (gateway/audit/retentionRoutes.ts),
 * and the scheduled purge (gateway/audit/retentionJob.ts). One route module, so the schedule
 * starts with the gateway and stops with it.
 */
import { registerAuditRoutes } from './routes.js';
import { createRetentionJob, type RetentionJob, type RetentionJobOptions } from './retentionJob.js';
import { registerRetentionRoutes } from './retentionRoutes.js';
import type { GatewayContext } from '../context.js';
import type { RouteModule } from '../server.js';

/** Options of {@link auditRoutes}. */
export interface AuditOptions extends RetentionJobOptions {
  /** Called with the retention job once it runs (embedders and tests drive it). */
  onRetentionJob?: (job: RetentionJob) => void;
  /** Do not schedule purges (they still run through `POST /api/v1/audit/purge`). */
  manual?: boolean;
}

/** The audit and retention routes, with the purge schedule tuned by `options`. */
export function auditRoutes(options: AuditOptions = {}): RouteModule {
  return (ctx: GatewayContext) => {
    const job = createRetentionJob(ctx, options);
    if (!options.manual) job.start();
    ctx.onClose(() => job.close());
    options.onRetentionJob?.(job);
    registerAuditRoutes(ctx);
    registerRetentionRoutes(ctx, job);
  };
}
