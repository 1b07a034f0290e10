/**
 * Store-and-forward under chaos: every payment a terminal approved offline left a signed
 * record on the device, and the cloud's `saf_transactions` holds each record exactly once
 * (the demo's `verifyExactlyOnce` over every device file: nothing missing, nothing
 * unexpected, nothing duplicated, nothing left pending), as the device wrote it — same
 * sequence number, same signature.
 */
import type { CloudStore } from '../../../runtime/index.js';
import { verifyExactlyOnce } from '../../../bin/demo/verifyDemo.js';
import type { DeviceFacts } from './deviceFiles.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';

/** Check the SAF invariant over `devices` (their files) against the cloud. */
export async function checkSafExactlyOnce(
  cloud: CloudStore,
  devices: readonly { deviceId: string; dbFile: string }[],
  facts: readonly DeviceFacts[],
): Promise<InvariantResult> {
  const v = new Violations();
  const verdict = await verifyExactlyOnce(cloud, devices);
  for (const id of verdict.missing) v.add('synced on a device, absent from the cloud', id);
  for (const id of verdict.unexpected) v.add('in the cloud, not recorded by a device', id);
  for (const id of verdict.duplicated) v.add('held more than once by the cloud', id);
  if (verdict.pending > 0) v.add('still pending on a device', String(verdict.pending));
  // every record of this run is a genuine payment: the cloud has no reason to refuse one
  for (const device of facts)
    for (const r of device.records)
      if (r.status === 'REJECTED')
        v.add('refused by the cloud', `${device.deviceId}/${r.workflowId}`);

  const rows = await cloud.cloud
    .selectFrom('saf_transactions')
    .select(['idempotency_key', 'device_id', 'device_sequence', 'signature'])
    .where(
      'device_id',
      'in',
      devices.map((d) => d.deviceId),
    )
    .execute();
  const cloudById = new Map(rows.map((r) => [r.idempotency_key, r]));

  let approvedOffline = 0;
  let recorded = 0;
  for (const device of facts) {
    const byWorkflow = new Map(device.records.map((r) => [r.workflowId, r]));
    for (const record of device.records) {
      const row = cloudById.get(record.workflowId);
      if (!row) continue;
      recorded++;
      if (row.device_id !== device.deviceId)
        v.add('held under another device', `${record.workflowId} (${row.device_id})`);
      if (Number(row.device_sequence) !== record.sequence || row.signature !== record.signature)
        v.add('cloud copy differs from the device record', record.workflowId);
    }
    for (const w of device.workflows) {
      if (w.status !== 'COMPLETED') continue;
      if (w.decision?.status !== 'APPROVED' || w.decision.mode !== 'OFFLINE') continue;
      approvedOffline++;
      if (!byWorkflow.has(w.id))
        v.add('approved offline without a SAF record', `${device.deviceId}/${w.id}`);
      else if (!cloudById.has(w.id))
        v.add('approved offline, record not in the cloud', `${device.deviceId}/${w.id}`);
    }
  }
  return invariant(
    'every approved offline payment in saf_transactions exactly once',
    {
      approved_offline_payments: approvedOffline,
      device_records: verdict.deviceRecords,
      cloud_records: verdict.cloudRecords,
      matched_device_and_cloud: recorded,
      pending: verdict.pending,
      rejected: verdict.rejected,
      missing: verdict.missing.length,
      unexpected: verdict.unexpected.length,
      duplicated: verdict.duplicated.length,
    },
    v,
  );
}
