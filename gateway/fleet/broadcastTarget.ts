/**
 * A broadcast's target filter as the API takes it and the row stores it (snake_case JSON),
 * and its translation into the store's {@link DeviceTargetFilter}. A single value or a list
 * is accepted for type, location and status; metadata values are scalars compared with
 * their JSON type.
 */
import type { DeviceTargetFilter } from './store/broadcasts/deviceFilter.js';

/** The stored / API form of a target filter. */
export interface BroadcastTarget {
  device_ids?: string[];
  device_type?: string | string[];
  location?: string | string[];
  status?: string | string[];
  metadata?: Record<string, string | number | boolean>;
}

const list = (value: unknown): string[] | undefined =>
  value === undefined
    ? undefined
    : (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

/** The store filter of a stored target (unknown keys are ignored). */
export function toDeviceTargetFilter(target: unknown): DeviceTargetFilter {
  const t = (typeof target === 'object' && target !== null ? target : {}) as Record<
    string,
    unknown
  >;
  const filter: DeviceTargetFilter = {};
  const deviceIds = list(t.device_ids);
  const deviceTypes = list(t.device_type);
  const locations = list(t.location);
  const statuses = list(t.status);
  if (deviceIds) filter.deviceIds = deviceIds;
  if (deviceTypes) filter.deviceTypes = deviceTypes;
  if (locations) filter.locations = locations;
  if (statuses) filter.statuses = statuses;
  if (typeof t.metadata === 'object' && t.metadata !== null && !Array.isArray(t.metadata)) {
    const metadata: Record<string, string | number | boolean> = {};
    for (const [key, value] of Object.entries(t.metadata))
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        metadata[key] = value;
    filter.metadata = metadata;
  }
  return filter;
}
