/**
 * A gateway for approval tests: command, fleet and governance routes with their periodic
 * work parked (the fleet driver and the approval sweeper are stepped by hand), on a
 * hand-moved clock; a webhook registration for the approval events (never delivered — the
 * tests read `webhook_deliveries`), and the policy both approval suites hold REBOOTs under.
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalSweeper } from '../../gateway/governance/approvalSweeper.js';
import { governanceRoutes } from '../../gateway/governance/module.js';
import { insertWebhook } from '../../gateway/webhooks/store/webhooks/index.js';
import type { TestClock } from './device.js';
import { startFleetGateway, type FleetGateway } from './fleet.js';
import type { CloudStore } from '../../runtime/index.js';
import type { TestDialect } from './stores.js';

/** REBOOTs need two approvals by operators, within an hour. */
export const REBOOT_TWO_APPROVERS = {
  name: 'reboot-two-approvers',
  command_type: 'REBOOT',
  requires_approval: true,
  min_approvals: 2,
  approver_roles: ['operator'],
  approval_ttl_seconds: 3600,
};

/** A test gateway with its fleet driver and approval sweeper. */
export interface ApprovalsGateway extends FleetGateway {
  sweeper: ApprovalSweeper;
}

/** Start the gateway and register the approval events' webhook. */
export async function startApprovalsGateway(
  dialect: TestDialect<CloudStore>,
  clock: TestClock,
): Promise<ApprovalsGateway> {
  let sweeper: ApprovalSweeper | undefined;
  const gw = await startFleetGateway(dialect, clock, [
    governanceRoutes({ approvalSweepIntervalMs: 3_600_000, onSweeper: (s) => (sweeper = s) }),
  ]);
  await insertWebhook(
    gw.handle.store,
    {
      webhookId: randomUUID(),
      name: 'approvals',
      url: 'http://127.0.0.1:9/hook',
      eventTypes: ['approval.requested', 'approval.decided'],
      secretCiphertext: gw.keys.seal('whsec-test'),
      active: true,
      maxRetries: 3,
      createdBy: 'test',
    },
    clock.now(),
  );
  return Object.assign(gw, { sweeper: sweeper! });
}
