/**
 * Query the command audit log: exact filters (device, command, actor, event types, batch,
 * broadcast, time range) and full-text search over the generated `search_vector` (event
 * type, actor, role, device and the values inside `details`; migration 0006) with
 * `plainto_tsquery('simple', …)` — the caller's words are a parameter, never SQL. Newest
 * first by id, keyset-paged with `beforeId`. Cloud tier only.
 */
import { sql } from 'kysely';
import { translateDriverError } from '../../../../runtime/index.js';
import type { CloudHandle } from '../../../../runtime/index.js';
import {
  COMMAND_AUDIT_COLUMNS,
  rowToCommandAudit,
  type CommandAuditRecord,
} from './commandAuditRecord.js';

/** Filters of {@link searchCommandAudit}; all given ones must hold. */
export interface CommandAuditFilter {
  deviceId?: string;
  commandId?: string;
  actor?: string;
  /** Any of these event types. */
  eventTypes?: readonly string[];
  batchId?: string;
  broadcastId?: string;
  /** Created at or after. */
  from?: Date;
  /** Created before. */
  to?: Date;
  /** Words that must all appear (full-text, `simple` configuration). */
  text?: string;
}

/** A page of {@link searchCommandAudit}. */
export interface CommandAuditPage {
  /** Rows per page (1–5000). */
  limit: number;
  /** Only rows with a lower id (the next page). */
  beforeId?: number;
}

/** Audit rows matching `filter`, newest first. */
export async function searchCommandAudit(
  h: CloudHandle,
  filter: CommandAuditFilter,
  page: CommandAuditPage,
): Promise<CommandAuditRecord[]> {
  try {
    let query = h.cloud.selectFrom('command_audit_log').select(COMMAND_AUDIT_COLUMNS);
    if (filter.deviceId !== undefined) query = query.where('device_id', '=', filter.deviceId);
    if (filter.commandId !== undefined) query = query.where('command_id', '=', filter.commandId);
    if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor);
    if (filter.eventTypes !== undefined && filter.eventTypes.length > 0)
      query = query.where('event_type', 'in', [...filter.eventTypes]);
    if (filter.batchId !== undefined) query = query.where('batch_id', '=', filter.batchId);
    if (filter.broadcastId !== undefined)
      query = query.where('broadcast_id', '=', filter.broadcastId);
    if (filter.from) query = query.where('created_at', '>=', h.codec.time(filter.from));
    if (filter.to) query = query.where('created_at', '<', h.codec.time(filter.to));
    if (filter.text !== undefined && filter.text.trim() !== '')
      query = query.where(sql<boolean>`search_vector @@ plainto_tsquery('simple', ${filter.text})`);
    if (page.beforeId !== undefined) query = query.where('id', '<', page.beforeId);
    const rows = await query
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(page.limit, 1), 5000))
      .execute();
    return rows.map((row) => rowToCommandAudit(h.codec, row));
  } catch (error) {
    throw translateDriverError(error, 'search the command audit log');
  }
}
