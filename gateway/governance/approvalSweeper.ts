/**
 * The approvals' maintenance pass: every gateway expires PENDING approvals past their
 * deadline now and then (expireApprovals is safe to run concurrently: SKIP LOCKED), so an
 * approval nobody touches still ends EXPIRED, durably, with its audit row and its
 * `approval.decided` webhook event. Deciding on an expired approval expires it too, so the
 * interval only bounds how long a listing may still show one PENDING.
 */
import { createBackgroundLoop } from '../../runtime/index.js';
import { SYSTEM_ACTOR } from '../commands/store/commands/command.js';
import { expireApprovals } from './store/approvals/index.js';
import type { GatewayContext } from '../context.js';

/** The sweeper of one gateway. */
export interface ApprovalSweeper {
  /** Expire what is due now; returns how many expired. */
  sweep(): Promise<number>;
  /** Stop the periodic pass and wait for one in flight. */
  close(): Promise<void>;
}

/** Start sweeping every `intervalMs`. */
export function startApprovalSweeper(ctx: GatewayContext, intervalMs: number): ApprovalSweeper {
  const loop = createBackgroundLoop({
    intervalMs,
    pass: async () => {
      let total = 0;
      for (;;) {
        const expired = await expireApprovals(ctx.store, SYSTEM_ACTOR, ctx.now());
        total += expired.length;
        if (expired.length < 500) return total;
      }
    },
    onError: (error) => ctx.app.log.warn({ err: error }, 'expiring approvals failed'),
  });
  loop.start();
  return {
    sweep: () => loop.runNow(),
    close: () => loop.stop(),
  };
}
