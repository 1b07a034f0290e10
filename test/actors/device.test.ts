/**
 * The device status machine: every transition of its table, the session guard that keeps a
 * late disconnect of an old session from taking a reconnected device offline, concurrent
 * uploads, and persist → restore → continue (including a lost snapshot rebuilt from the
 * status column).
 */
import { describe, expect, it } from 'vitest';
import {
  devEvents,
  deviceStatusOf,
  nextDeviceSnapshot,
  persistDeviceSnapshot,
  restoreDeviceSnapshot,
  type DeviceEvent,
  type DeviceSnapshot,
} from '../../actors/index.js';

const run = (
  events: DeviceEvent[],
  from: DeviceSnapshot = restoreDeviceSnapshot(null, 'OFFLINE'),
) => events.reduce(nextDeviceSnapshot, from);
const statuses = (events: DeviceEvent[]) => {
  let snapshot = restoreDeviceSnapshot(null, 'OFFLINE');
  return events.map((event) => deviceStatusOf((snapshot = nextDeviceSnapshot(snapshot, event))));
};

describe('device status machine', () => {
  it('goes ONLINE with a session and OFFLINE when it ends', () => {
    expect(statuses([devEvents.connected('a'), devEvents.disconnected('a')])).toEqual([
      'ONLINE',
      'OFFLINE',
    ]);
  });

  it('ignores the late disconnect of a session that was replaced', () => {
    const events = [
      devEvents.connected('a'),
      devEvents.connected('b'),
      devEvents.disconnected('a'),
    ];
    expect(statuses(events)).toEqual(['ONLINE', 'ONLINE', 'ONLINE']);
    expect(statuses([...events, devEvents.disconnected('b')]).at(-1)).toBe('OFFLINE');
  });

  it('is SYNCING while uploads run, then back to what the connection says', () => {
    expect(
      statuses([
        devEvents.connected('a'),
        devEvents.syncStarted(),
        devEvents.syncStarted(),
        devEvents.syncFinished(),
        devEvents.syncFinished(),
      ]),
    ).toEqual(['ONLINE', 'SYNCING', 'SYNCING', 'SYNCING', 'ONLINE']);
    expect(
      statuses([
        devEvents.connected('a'),
        devEvents.syncStarted(),
        devEvents.disconnected('a'),
        devEvents.syncFinished(),
      ]),
    ).toEqual(['ONLINE', 'SYNCING', 'SYNCING', 'OFFLINE']);
    expect(statuses([devEvents.syncStarted(), devEvents.syncFinished()])).toEqual([
      'SYNCING',
      'OFFLINE',
    ]);
  });

  it('resets to OFFLINE when stale, and ignores events that do not apply', () => {
    expect(
      statuses([devEvents.connected('a'), devEvents.syncStarted(), devEvents.stale()]),
    ).toEqual(['ONLINE', 'SYNCING', 'OFFLINE']);
    expect(statuses([devEvents.disconnected('x'), devEvents.syncFinished()])).toEqual([
      'OFFLINE',
      'OFFLINE',
    ]);
  });

  it('persists as small JSON and continues after a restore', () => {
    const snapshot = run([devEvents.connected('a'), devEvents.syncStarted()]);
    const persisted = JSON.parse(JSON.stringify(persistDeviceSnapshot(snapshot))) as unknown;
    expect(persisted).toEqual({
      machine: 'device',
      value: 'syncing',
      context: { session: 'a', syncs: 1 },
    });
    expect(JSON.stringify(persisted).length).toBeLessThan(100);
    const restored = restoreDeviceSnapshot(persisted, 'SYNCING');
    expect(deviceStatusOf(run([devEvents.syncFinished()], restored))).toBe('ONLINE');
    expect(
      deviceStatusOf(run([devEvents.syncFinished(), devEvents.disconnected('a')], restored)),
    ).toBe('OFFLINE');
  });

  it('rebuilds a lost or unreadable snapshot from the status column', () => {
    for (const junk of [null, {}, { machine: 'device', value: 'flying', context: {} }, 'x']) {
      expect(deviceStatusOf(restoreDeviceSnapshot(junk, 'OFFLINE'))).toBe('OFFLINE');
      // the session is unknown: any disconnect ends it
      const online = restoreDeviceSnapshot(junk, 'ONLINE');
      expect(deviceStatusOf(online)).toBe('ONLINE');
      expect(deviceStatusOf(run([devEvents.disconnected('whatever')], online))).toBe('OFFLINE');
      const syncing = restoreDeviceSnapshot(junk, 'SYNCING');
      expect(deviceStatusOf(run([devEvents.syncFinished()], syncing))).toBe('OFFLINE');
    }
  });
});
