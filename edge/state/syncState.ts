/**
 * `edge_sync_state`: the agent's small key/value facts (JSON values), shared by its
 * components. The keys are named here, once, so the component that writes a fact and the
 * ones that read it (metrics reads the sync component's last sync; the agent reads the
 * config component's last rejection) cannot drift apart by a typo.
 */
import type { EdgeHandle } from '../../runtime/index.js';
import {
  executeCached,
  SAF_BACKLOG_TOTALS_KEY,
  translateDriverError,
} from '../../runtime/index.js';

/** Keys of `edge_sync_state` the edge components share. */
export const SYNC_STATE_KEYS = {
  /** When the last sync round with the cloud succeeded: an ISO 8601 string. Written by sync. */
  lastSync: 'last_sync',
  /** The pinned cloud public key: {@link PinnedPublicKey} (edge/config/pinPublicKey.ts). */
  cloudPublicKey: 'cloud_public_key',
  /** The last configuration the device refused: a `ConfigRejection` (edge/config). */
  configRejection: 'config_last_rejection',
  /**
   * The last store-and-forward sequence number taken: an integer. Written by the SAF
   * recorder in the transaction that commits the record, so a number is never given twice,
   * also after the records that carried it are deleted (edge/saf/nextSafSequence.ts).
   */
  safLastSequence: 'saf_last_sequence',
  /**
   * The last workflow_audit_log id whose ended workflow the cloud has answered for: an
   * integer. Written by sync after each summary upload (edge/sync/listEndedWorkflows.ts).
   */
  summariesAfter: 'workflow_summaries_after',
  /**
   * Count, amount and exposure of the PENDING SAF records: `[count, amount, exposure]`.
   * Written only by the store's triggers (runtime/store/sqlite/safBacklogTotals.ts).
   */
  safBacklogTotals: SAF_BACKLOG_TOTALS_KEY,
} as const;

/** Prefix of the per-command records of the command channel (`command:<command_id>`). */
export const COMMAND_KEY_PREFIX = 'command:';

/** A stored fact. */
export interface SyncStateEntry {
  value: unknown;
  updatedAt: Date;
}

/** The fact stored under `key`, if any. */
export async function readSyncState(
  h: EdgeHandle,
  key: string,
): Promise<SyncStateEntry | undefined> {
  try {
    const [row] = (
      await executeCached(h, 'readSyncState', [key], () =>
        h.edge.selectFrom('edge_sync_state').select(['value', 'updated_at']).where('key', '=', key),
      )
    ).rows;
    return row
      ? { value: h.codec.parseJson(row.value), updatedAt: h.codec.parseTime(row.updated_at) }
      : undefined;
  } catch (error) {
    throw translateDriverError(error, `read edge sync state ${key}`);
  }
}

/** Store `value` (JSON) under `key`, replacing what was there. */
export async function writeSyncState(
  h: EdgeHandle,
  key: string,
  value: unknown,
  now: Date,
): Promise<void> {
  const json = h.codec.json(value);
  const at = h.codec.time(now);
  try {
    await executeCached(h, 'writeSyncState', [key, json, at, json, at], () =>
      h.edge
        .insertInto('edge_sync_state')
        .values({ key, value: json, updated_at: at })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value: json, updated_at: at })),
    );
  } catch (error) {
    throw translateDriverError(error, `write edge sync state ${key}`);
  }
}

/** Record that a sync round with the cloud succeeded at `at` (the sync component calls this). */
export function recordLastSync(h: EdgeHandle, at: Date): Promise<void> {
  return writeSyncState(h, SYNC_STATE_KEYS.lastSync, at.toISOString(), at);
}

/** When the last sync round succeeded, or undefined if none has yet. */
export async function readLastSync(h: EdgeHandle): Promise<Date | undefined> {
  const entry = await readSyncState(h, SYNC_STATE_KEYS.lastSync);
  if (entry === undefined) return undefined;
  const value = entry.value;
  const text =
    typeof value === 'string'
      ? value
      : value !== null && typeof value === 'object' && 'at' in value
        ? String(value.at)
        : undefined;
  if (text === undefined) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
}
