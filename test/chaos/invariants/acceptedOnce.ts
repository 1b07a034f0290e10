/**
 * No record accepted twice. Devices upload the same records again and again under chaos (an
 * answer lost to a cut, a host killed before it marked a batch synced, the reconnect storm);
 * the cloud must store each once and say so once:
 *
 * - `saf_transactions` holds each workflow id and each (device, sequence number) once;
 * - the `saf.batch_synced` events — the cloud's own account of what each upload stored —
 *   name no record in two uploads, and their `stored` counts add up to the rows (a record
 *   stored by two uploads would appear twice, or the counts would exceed the rows); that
 *   every stored record is in some event is the webhook invariant's business.
 */
import { sql } from 'kysely';
import type { CloudStore } from '../../../runtime/index.js';
import type { WebhookReceiver } from '../webhookReceiver.js';
import type { DeviceFacts } from './deviceFiles.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';

/** Check the invariant; `factsWebhookId` is the registration that receives SAF events. */
export async function checkAcceptedOnce(
  store: CloudStore,
  facts: readonly DeviceFacts[],
  receiver: WebhookReceiver,
  factsWebhookId: string | undefined,
): Promise<InvariantResult> {
  const v = new Violations();
  const count = sql<number>`COUNT(*)`;
  const sameId = await store.cloud
    .selectFrom('saf_transactions')
    .select(['idempotency_key', count.as('n')])
    .groupBy('idempotency_key')
    .having(count, '>', 1)
    .execute();
  for (const r of sameId) v.add('workflow id stored twice', `${r.idempotency_key} ×${r.n}`);
  const sameSequence = await store.cloud
    .selectFrom('saf_transactions')
    .select(['device_id', 'device_sequence', count.as('n')])
    .groupBy(['device_id', 'device_sequence'])
    .having(count, '>', 1)
    .execute();
  for (const r of sameSequence)
    v.add('device sequence number stored twice', `${r.device_id}#${r.device_sequence} ×${r.n}`);

  const rows = await store.cloud
    .selectFrom('saf_transactions')
    .select(['idempotency_key'])
    .execute();
  const uploads = [...receiver.events.values()].filter(
    (e) => e.webhookId === factsWebhookId && e.type === 'saf.batch_synced',
  );
  const reported = new Map<string, number>();
  let stored = 0;
  let duplicatesReported = 0;
  for (const e of uploads) {
    stored += Number(e.data.stored);
    duplicatesReported += Number(e.data.duplicates);
    for (const id of e.data.workflow_ids as string[]) reported.set(id, (reported.get(id) ?? 0) + 1);
  }
  for (const [id, n] of reported) if (n > 1) v.add('reported stored by two uploads', `${id} ×${n}`);
  if (stored !== rows.length)
    v.add('upload events’ stored counts ≠ rows', `${stored} vs ${rows.length}`);
  return invariant(
    'no record accepted twice',
    {
      cloud_records: rows.length,
      uploads_that_stored: uploads.length,
      stored_per_upload_events: stored,
      already_held_resent: duplicatesReported,
      // how often the devices sent a record again: what this invariant was up against
      records_sent_more_than_once: facts
        .flatMap((f) => f.records)
        .filter((r) => r.uploadAttempts > 1).length,
    },
    v,
  );
}
