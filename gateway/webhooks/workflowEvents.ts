/**
 * `workflow.completed` / `workflow.failed` webhook events, written by the runtime's settled
 * hook in the same transaction as the workflow's terminal status (an outbox): the event
 * exists exactly when the status was committed. FAILED and FAILED_ROLLED_BACK are both
 * `workflow.failed` (the status tells them apart); CANCELLED emits nothing. The event carries
 * the workflow's identity, not its state — receivers read the state through the API.
 *
 * The gateway's own runtime and `saffron cloud serve` install it; a runtime embedded
 * elsewhere over the cloud database passes `onSettled: workflowWebhookHook()` to emit too.
 */
import type { SettledHook } from '../../actors/index.js';
import { asCloud, type WorkflowStatus } from '../../runtime/index.js';
import { emitWebhookEvent } from './store/webhooks/index.js';

const KIND: Partial<Record<WorkflowStatus, 'workflow.completed' | 'workflow.failed'>> = {
  COMPLETED: 'workflow.completed',
  FAILED: 'workflow.failed',
  FAILED_ROLLED_BACK: 'workflow.failed',
};

/** The settled hook that emits workflow webhook events (`now` dates the envelopes). */
export function workflowWebhookHook(now: () => Date = () => new Date()): SettledHook {
  return ({ record, status }) => {
    const kind = KIND[status];
    if (!kind) return undefined;
    return async (tx) => {
      // webhooks are the cloud's: a worker on a SQLite file has no registrations to serve
      if (tx.dialect === 'sqlite') return;
      await emitWebhookEvent(
        asCloud(tx),
        kind,
        {
          workflow_id: record.id,
          workflow_type: record.workflowType,
          workflow_version: record.workflowVersion,
          status,
          owner_id: record.ownerId,
          data_region: record.dataRegion,
        },
        now(),
      );
    };
  };
}
