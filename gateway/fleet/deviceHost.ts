/**
 * The device actor host: apply events to devices' persisted actors — lock the rows, restore
 * the snapshots, compute the next ones with the pure transition, write status and snapshot
 * back — in one transaction. Any gateway process can do this for any device, which is what
 * lets a device hold its socket on one node and upload through another. Every event but
 * `dev.stale` is a sign of life and moves `last_seen`.
 *
 * Two forms: {@link applyDeviceEvent} for one event of one device (uploads), and
 * {@link applyDeviceEventBatch} for the queued connects, disconnects, signs of life and
 * stale resets of many devices (the gateway's presence writer): a reconnect storm of 10,000
 * devices is then a few dozen transactions instead of 20,000. Both restore and advance the
 * same machine with the same functions, so a device reads the same whichever applied it.
 *
 * A device that gains a session (none was current) or loses its current one also emits the
 * `device.online` / `device.offline` webhook event in that transaction (an outbox): the
 * event exists exactly when the change was committed, whichever gateway applied it.
 * Reconnecting while a session is current, and uploads (SYNCING), emit nothing.
 */
import { type DeviceStatus, type CloudStore } from '../../runtime/index.js';
import { lockDeviceStatus } from '../devices/store/deviceStatus/lockDeviceStatus.js';
import { lockDeviceStatuses } from '../devices/store/deviceStatus/lockDeviceStatuses.js';
import { saveDeviceStatus } from '../devices/store/deviceStatus/saveDeviceStatus.js';
import {
  saveDeviceStatuses,
  type DeviceStatusRow,
} from '../devices/store/deviceStatus/saveDeviceStatuses.js';
import { emitWebhookEvents, type WebhookEvent } from '../webhooks/store/webhooks/index.js';
import {
  devEvents,
  type DeviceEvent,
  deviceStatusOf,
  nextDeviceSnapshot,
  persistDeviceSnapshot,
  restoreDeviceSnapshot,
  type DeviceSnapshot,
} from '../../actors/index.js';

/** A device's status before and after an event. */
export interface DeviceStatusUpdate {
  previous: DeviceStatus;
  status: DeviceStatus;
}

/** The `device.online` / `device.offline` event of a step, if it changed connectivity. */
function connectivityEvent(
  deviceId: string,
  current: DeviceSnapshot,
  next: DeviceSnapshot,
  event: DeviceEvent,
): WebhookEvent | undefined {
  const wasConnected = current.context.session !== null;
  const isConnected = next.context.session !== null;
  if (wasConnected === isConnected) return undefined;
  return {
    kind: isConnected ? 'device.online' : 'device.offline',
    data: {
      device_id: deviceId,
      status: deviceStatusOf(next),
      reason: isConnected ? 'connected' : event.type === 'dev.stale' ? 'stale' : 'disconnected',
    },
  };
}

/** Apply `event` to `deviceId`'s actor; undefined when the device does not exist. */
export async function applyDeviceEvent(
  store: CloudStore,
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
    const webhook = connectivityEvent(deviceId, current, next, event);
    if (webhook) await emitWebhookEvents(tx, [webhook], now);
    return { previous: deviceStatusOf(current), status };
  });
}

/** Something that happened to a device, queued to be applied with others, in order. */
export type QueuedDeviceEvent =
  /** A session event (`dev.connected`, `dev.disconnected`), a sign of life at `at`. */
  | { kind: 'session'; event: DeviceEvent; at: Date }
  /** A sign of life only (a heartbeat): `last_seen` moves to `at`. */
  | { kind: 'seen'; at: Date }
  /**
   * The sweep found the device quiet since before `before`: `dev.stale`, unless a sign of
   * life at or after `before` is stored or came earlier in the queue (it reconnected).
   */
  | { kind: 'stale'; before: Date };

/**
 * Apply each device's queued events, in order, in one transaction: its rows locked by one
 * statement, written by one, and the connectivity changes' webhook events inserted by one
 * (see the module comment). Returns each existing device's status before and after; devices
 * that do not exist are left out (their events are dropped).
 */
export async function applyDeviceEventBatch(
  store: CloudStore,
  events: ReadonlyMap<string, readonly QueuedDeviceEvent[]>,
  now: Date,
): Promise<Map<string, DeviceStatusUpdate>> {
  if (events.size === 0) return new Map();
  return store.transaction(async (tx) => {
    const locked = await lockDeviceStatuses(tx, [...events.keys()]);
    const updates = new Map<string, DeviceStatusUpdate>();
    const rows: DeviceStatusRow[] = [];
    const webhooks: WebhookEvent[] = [];
    for (const [deviceId, queued] of events) {
      const row = locked.get(deviceId);
      if (!row) continue;
      const first = restoreDeviceSnapshot(row.actor, row.status);
      let snapshot = first;
      let stepped = false;
      let lastSeen = row.lastSeen;
      let seen: Date | undefined;
      const signOfLife = (at: Date) => {
        if (lastSeen === null || at > lastSeen) lastSeen = at;
        if (seen === undefined || at > seen) seen = at;
      };
      for (const q of queued) {
        if (q.kind === 'seen') {
          signOfLife(q.at);
          continue;
        }
        if (q.kind === 'stale' && lastSeen !== null && lastSeen >= q.before) continue;
        const event = q.kind === 'stale' ? devEvents.stale() : q.event;
        if (q.kind === 'session') signOfLife(q.at);
        const next = nextDeviceSnapshot(snapshot, event);
        const webhook = connectivityEvent(deviceId, snapshot, next, event);
        if (webhook) webhooks.push(webhook);
        snapshot = next;
        stepped = true;
      }
      if (!stepped && seen === undefined) continue;
      rows.push({
        deviceId,
        ...(stepped
          ? { state: { status: deviceStatusOf(snapshot), actor: persistDeviceSnapshot(snapshot) } }
          : {}),
        ...(seen ? { lastSeen: seen } : {}),
      });
      updates.set(deviceId, { previous: deviceStatusOf(first), status: deviceStatusOf(snapshot) });
    }
    await saveDeviceStatuses(tx, rows);
    await emitWebhookEvents(tx, webhooks, now);
    return updates;
  });
}
