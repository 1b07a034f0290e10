/**
 * The demo's closing check — the promise of store-and-forward, counted: every record a
 * device wrote for a payment completed offline is in the cloud's `saf_transactions` exactly
 * once, nothing the devices did not record is there, and nothing is left waiting.
 */
import { sql } from 'kysely';
import { asEdge, openStore, type CloudStore, type EdgeStore } from '../../runtime/index.js';

/** The check's figures; `ok` when every invariant holds. */
export interface DemoVerdict {
  /** Records the devices wrote (any status). */
  deviceRecords: number;
  /** Records the cloud holds for these devices. */
  cloudRecords: number;
  /** Still PENDING on a device. */
  pending: number;
  /** Refused by the cloud (kept on the device for an operator). */
  rejected: number;
  /** Synced on a device but absent from the cloud. */
  missing: string[];
  /** In the cloud but not recorded (or recorded as rejected) by any device. */
  unexpected: string[];
  /** Workflow ids the cloud holds more than once. */
  duplicated: string[];
  ok: boolean;
}

interface DeviceRecord {
  workflow_id: string;
  status: string;
}

async function readDeviceRecords(file: string): Promise<DeviceRecord[]> {
  const store: EdgeStore = asEdge(await openStore(file));
  try {
    return await store.edge
      .selectFrom('saf_pending_transactions')
      .select(['workflow_id', 'status'])
      .execute();
  } finally {
    await store.close();
  }
}

/** Compare the devices' SQLite files (agents stopped) with the cloud. */
export async function verifyExactlyOnce(
  cloud: CloudStore,
  devices: readonly { deviceId: string; dbFile: string }[],
): Promise<DemoVerdict> {
  const synced = new Set<string>();
  let deviceRecords = 0;
  let pending = 0;
  let rejected = 0;
  for (const device of devices) {
    for (const r of await readDeviceRecords(device.dbFile)) {
      deviceRecords++;
      if (r.status === 'PENDING') pending++;
      else if (r.status === 'REJECTED') rejected++;
      else synced.add(r.workflow_id);
    }
  }
  const ids = devices.map((d) => d.deviceId);
  const rows =
    ids.length === 0
      ? []
      : await cloud.cloud
          .selectFrom('saf_transactions')
          .select(['idempotency_key as workflow_id', sql<number | string>`COUNT(*)`.as('n')])
          .where('device_id', 'in', ids)
          .groupBy('idempotency_key')
          .execute();
  const inCloud = new Set(rows.map((r) => r.workflow_id));
  const duplicated = rows.filter((r) => Number(r.n) > 1).map((r) => r.workflow_id);
  const missing = [...synced].filter((id) => !inCloud.has(id));
  const unexpected = [...inCloud].filter((id) => !synced.has(id));
  const cloudRecords = rows.reduce((n, r) => n + Number(r.n), 0);
  return {
    deviceRecords,
    cloudRecords,
    pending,
    rejected,
    missing,
    unexpected,
    duplicated,
    ok: pending === 0 && !missing.length && !unexpected.length && !duplicated.length,
  };
}
