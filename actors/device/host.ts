/**
 * The device actor host: apply one event to a device's persisted actor — lock the row,
 * restore the snapshot, compute the next one with the pure transition, write the status
 * and snapshot back — in one transaction. Any gateway process can do this for any device,
 * which is what lets a device hold its socket on one node and upload through another.
 * Every event but `dev.stale` is a sign of life and moves `last_seen`.
 *
 * A device that gains a session (none was current) or loses its current one also emits the
 * `device.online` / `device.offline` webhook event in that transaction (an outbox): the
 * event exists exactly when the change was committed, whichever gateway applied it.
 * Reconnecting while a session is current, and uploads (SYNCING), emit nothing.
 */
import {
  emitWebhookEvent,
  lockDeviceStatus,
  saveDeviceStatus,
  type DeviceStatus,
  type Store,
} from '../../runtime/index.js';
import type { DeviceEvent } from './events.js';
import {
  deviceStatusOf,
  nextDeviceSnapshot,
  persistDeviceSnapshot,
  restoreDeviceSnapshot,
} from './snapshot.js';

/** A device's status before and after an event. */
export interface DeviceStatusUpdate {
  previous: DeviceStatus;
  status: DeviceStatus;
}

/** Apply `event` to `deviceId`'s actor; undefined when the device does not exist. */
export async function applyDeviceEvent(
  store: Store,
  deviceId: string,
  event: DeviceEvent,
  now: Date,
): Promise<DeviceStatusUpdate | undefined> {
  return store.transaction(async (tx) => {
    const locked = await lockDeviceStatus(tx, deviceId);
    if (!locked) return undefined;
    const current = restoreDeviceSnapshot(locked.actor, locked.status);
    const next = nextDeviceSnapshot(current, event);
    const status = deviceStatusOf(next);
    await saveDeviceStatus(tx, deviceId, {
      status,
      actor: persistDeviceSnapshot(next),
      ...(event.type !== 'dev.stale' ? { lastSeen: now } : {}),
    });
    const wasConnected = current.context.session !== null;
    const isConnected = next.context.session !== null;
    if (wasConnected !== isConnected)
      await emitWebhookEvent(
        tx,
        isConnected ? 'device.online' : 'device.offline',
        {
          device_id: deviceId,
          status,
          reason: isConnected ? 'connected' : event.type === 'dev.stale' ? 'stale' : 'disconnected',
        },
        now,
      );
    return { previous: deviceStatusOf(current), status };
  });
}
