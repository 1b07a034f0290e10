/**
 * Governance of the control plane: versioned command definitions, roles and authorization
 * policies, multi-party approvals and rate-limit rules (gateway/governance/). One route
 * module so the approvals' maintenance pass starts and stops with its routes. Enforcement
 * does not depend on these routes being served: the command gate runs wherever commands are
 * created, and the rate limiter in every authenticated route.
 */
import { ensureSystemRoles } from './store/authorization/index.js';
import type { GatewayContext } from '../context.js';
import { registerApprovalRoutes } from './approvalRoutes.js';
import { startApprovalSweeper, type ApprovalSweeper } from './approvalSweeper.js';
import { registerAuthorizationRoutes } from './authorizationRoutes.js';
import { registerRateLimitRoutes } from './rateLimitRoutes.js';
import { registerCommandVersionRoutes } from './versionRoutes.js';
import type { RouteModule } from '../server.js';

/** Options of {@link governanceRoutes}. */
export interface GovernanceOptions {
  /** How often expired approvals are marked EXPIRED (default 30 s). */
  approvalSweepIntervalMs?: number;
  /** Called with the sweeper once it runs (tests drive it by hand). */
  onSweeper?: (sweeper: ApprovalSweeper) => void;
}

/** The governance routes, with the approvals' maintenance pass tuned by `options`. */
export function governanceRoutes(options: GovernanceOptions = {}): RouteModule {
  return async (ctx: GatewayContext) => {
    await ensureSystemRoles(ctx.store);
    const sweeper = startApprovalSweeper(ctx, options.approvalSweepIntervalMs ?? 30_000);
    ctx.onClose(() => sweeper.close());
    options.onSweeper?.(sweeper);
    registerCommandVersionRoutes(ctx);
    registerAuthorizationRoutes(ctx);
    registerApprovalRoutes(ctx);
    registerRateLimitRoutes(ctx);
  };
}
