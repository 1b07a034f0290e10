/**
 * Which devices a broadcast targets: equality on device type, location, status and
 * metadata fields, or explicit device ids — all ANDed. The filter is data, turned into a
 * parameterized SQL condition here; no text from a caller ever becomes SQL. Metadata
 * equality uses JSONB containment (`metadata @> {"k": v}`), so values keep their JSON type
 * (`"3"` does not match `3`). Cloud tier only.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Codec } from '../../../../runtime/index.js';

/** A device target filter; every given criterion must hold. */
export interface DeviceTargetFilter {
  /** Only these devices. */
  deviceIds?: readonly string[];
  /** Devices of one of these types. */
  deviceTypes?: readonly string[];
  /** Devices at one of these locations. */
  locations?: readonly string[];
  /** Devices with one of these statuses (ONLINE, OFFLINE, SYNCING). */
  statuses?: readonly string[];
  /** Devices whose metadata has each of these keys with exactly this scalar value. */
  metadata?: Readonly<Record<string, string | number | boolean>>;
}

/** The SQL condition on `edge_devices` aliased `d` that selects `filter`'s devices. */
export function deviceFilterCondition(
  codec: Codec,
  filter: DeviceTargetFilter,
): RawBuilder<boolean> {
  const conditions: RawBuilder<unknown>[] = [];
  const anyOf = (column: string, values: readonly string[] | undefined) => {
    if (values === undefined) return;
    conditions.push(
      values.length === 0
        ? sql`FALSE`
        : sql`${sql.ref(`d.${column}`)} IN (${sql.join(values.map((v) => sql`${v}`))})`,
    );
  };
  anyOf('device_id', filter.deviceIds);
  anyOf('device_type', filter.deviceTypes);
  anyOf('location', filter.locations);
  anyOf('status', filter.statuses);
  if (filter.metadata && Object.keys(filter.metadata).length > 0)
    conditions.push(sql`d.metadata @> ${codec.json(filter.metadata)}::jsonb`);
  return conditions.length === 0
    ? sql<boolean>`TRUE`
    : sql<boolean>`${sql.join(conditions, sql` AND `)}`;
}
