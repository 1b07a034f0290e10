/**
 * Device snapshots: the next one (pure), and the JSON form kept in
 * `edge_devices.metadata.actor` — a few dozen bytes: `{machine, value, context}`. A missing
 * or unreadable snapshot is rebuilt from the status column instead of failing the device.
 */
import type { SnapshotFrom } from 'xstate';
import { pureInitialSnapshot, pureTransition } from '../pureTransition.js';
import type { DeviceStatus } from '../../runtime/index.js';
import { DEVICE_STATE_STATUS, deviceMachine, type DeviceMachineContext } from './deviceMachine.js';
import type { DeviceEvent } from './events.js';

/** A live device snapshot. */
export type DeviceSnapshot = SnapshotFrom<typeof deviceMachine>;
type StateName = keyof typeof DEVICE_STATE_STATUS;

/** What is stored under `metadata.actor`. */
export interface PersistedDeviceSnapshot {
  machine: 'device';
  value: StateName;
  context: DeviceMachineContext;
}

const STATE_OF_STATUS: Record<string, StateName> = {
  OFFLINE: 'offline',
  ONLINE: 'online',
  SYNCING: 'syncing',
};

function isPersisted(value: unknown): value is PersistedDeviceSnapshot {
  const p = value as Partial<PersistedDeviceSnapshot> | null;
  return (
    p !== null &&
    typeof p === 'object' &&
    p.machine === 'device' &&
    typeof p.value === 'string' &&
    p.value in DEVICE_STATE_STATUS &&
    typeof p.context === 'object' &&
    p.context !== null &&
    (typeof p.context.session === 'string' || p.context.session === null) &&
    Number.isInteger(p.context.syncs) &&
    p.context.syncs >= 0
  );
}

/** Rebuild a device's snapshot from its stored JSON, or from its status column. */
export function restoreDeviceSnapshot(persisted: unknown, status: string): DeviceSnapshot {
  if (isPersisted(persisted))
    return deviceMachine.resolveState({ value: persisted.value, context: persisted.context });
  const value = STATE_OF_STATUS[status] ?? 'offline';
  if (value === 'offline') return pureInitialSnapshot(deviceMachine);
  return deviceMachine.resolveState({
    value,
    context: { session: value === 'online' ? '*' : null, syncs: value === 'syncing' ? 1 : 0 },
  });
}

/** Apply `event`; an event the current state ignores leaves the snapshot as it is. */
export function nextDeviceSnapshot(current: DeviceSnapshot, event: DeviceEvent): DeviceSnapshot {
  return pureTransition(deviceMachine, current, event);
}

/** The JSON form to store. */
export function persistDeviceSnapshot(snapshot: DeviceSnapshot): PersistedDeviceSnapshot {
  return { machine: 'device', value: snapshot.value, context: snapshot.context };
}

/** The device status a snapshot means. */
export function deviceStatusOf(snapshot: DeviceSnapshot): DeviceStatus {
  return DEVICE_STATE_STATUS[snapshot.value];
}
