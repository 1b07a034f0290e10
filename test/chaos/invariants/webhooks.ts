/**
 * Webhooks under chaos: no event lost. Two views are checked.
 *
 * - The outbox: every delivery of the run's registrations (`webhook_deliveries`) ended
 *   DELIVERED, and the receiver got each of them, signed correctly — and got nothing that
 *   is not in the outbox.
 * - The facts: each fact that emits an event has its event at the receiver — every cloud
 *   workflow that ended COMPLETED or FAILED, every command that ended EXECUTED or FAILED,
 *   every configuration version published; and the `saf.batch_synced` events together name
 *   every record `saf_transactions` holds (that none is named twice is acceptedOnce.ts).
 */
import type { CloudStore } from '../../../runtime/index.js';
import type { WebhookReceiver } from '../webhookReceiver.js';
import type { CommandRow } from './commands.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';
import type { CloudWorkflowRow } from './workflows.js';

/** Check the webhook invariant (`webhookIds`: the run's registrations, facts first). */
export async function checkWebhooks(
  store: CloudStore,
  receiver: WebhookReceiver,
  webhookIds: readonly string[],
  workflows: readonly CloudWorkflowRow[],
  commands: readonly CommandRow[],
): Promise<InvariantResult> {
  const v = new Violations();
  const deliveries =
    webhookIds.length === 0
      ? []
      : await store.cloud
          .selectFrom('webhook_deliveries')
          .select(['webhook_id', 'event_id', 'event_type', 'status', 'attempt_count'])
          .where('webhook_id', 'in', webhookIds)
          .execute();
  const inOutbox = new Set<string>();
  const byStatus: Record<string, number> = {};
  let retried = 0;
  for (const d of deliveries) {
    const key = `${d.webhook_id}:${d.event_id}`;
    inOutbox.add(key);
    byStatus[d.status] = (byStatus[d.status] ?? 0) + 1;
    if (Number(d.attempt_count) > 1) retried++;
    if (d.status !== 'DELIVERED')
      v.add(`delivery left ${d.status}`, `${d.event_type} ${d.event_id}`);
    if (!receiver.events.has(key))
      v.add('never reached the receiver', `${d.event_type} ${d.event_id}`);
  }
  let repeats = 0;
  for (const [key, e] of receiver.events) {
    repeats += e.deliveries - 1;
    if (!inOutbox.has(key)) v.add('received but not in the outbox', `${e.type} ${e.id}`);
  }
  if (receiver.badSignatures > 0) v.add('bad signatures', String(receiver.badSignatures));

  // facts → events, on the facts registration
  const factsHook = webhookIds[0];
  const received = [...receiver.events.values()].filter((e) => e.webhookId === factsHook);
  const ids = (type: string, field: string) =>
    new Set(received.filter((e) => e.type === type).map((e) => String(e.data[field])));
  const completed = ids('workflow.completed', 'workflow_id');
  const failed = ids('workflow.failed', 'workflow_id');
  for (const w of workflows) {
    if (w.status === 'COMPLETED' && !completed.has(w.id)) v.add('no workflow.completed', w.id);
    if (w.status.startsWith('FAILED') && !failed.has(w.id)) v.add('no workflow.failed', w.id);
  }
  const executed = ids('command.executed', 'command_id');
  const commandFailed = ids('command.failed', 'command_id');
  for (const c of commands) {
    if (c.status === 'EXECUTED' && !executed.has(c.command_id))
      v.add('no command.executed', c.command_id);
    if (c.status === 'FAILED' && !commandFailed.has(c.command_id))
      v.add('no command.failed', c.command_id);
  }
  const configs = await store.cloud.selectFrom('device_configs').select(['config_id']).execute();
  const published = ids('config.published', 'config_id');
  for (const c of configs)
    if (!published.has(c.config_id)) v.add('no config.published', c.config_id);

  const safRows = await store.cloud
    .selectFrom('saf_transactions')
    .select(['idempotency_key'])
    .execute();
  const reported = new Set(
    received
      .filter((x) => x.type === 'saf.batch_synced')
      .flatMap((e) => e.data.workflow_ids as string[]),
  );
  for (const r of safRows)
    if (!reported.has(r.idempotency_key))
      v.add('stored SAF record in no saf.batch_synced', r.idempotency_key);

  return invariant(
    'no webhook event lost',
    {
      deliveries: deliveries.length,
      ...Object.fromEntries(Object.entries(byStatus).map(([s, n]) => [`delivery_${s}`, n])),
      retried_deliveries: retried,
      received_events: receiver.events.size,
      repeated_requests: repeats,
      saf_records_reported: reported.size,
      bad_signatures: receiver.badSignatures,
    },
    v,
  );
}
