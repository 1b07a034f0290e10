/**
 * The command broadcast record as operations return it. A broadcast's phase driver is an
 * actor (actors/broadcast/) persisted as a JSON snapshot in its row; status, phase and
 * counts are the snapshot's projection, written in the same transaction. Commands a
 * broadcast creates carry its `broadcast_id`, and `batch_sequence` holds the rollout phase
 * (1-based) that created them. Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** The columns a broadcast read returns. */
export const BROADCAST_COLUMNS = [
  'broadcast_id',
  'command_type',
  'payload',
  'target_filter',
  'rollout',
  'status',
  'current_phase',
  'total_devices',
  'succeeded_count',
  'failed_count',
  'failure_threshold',
  'actor_snapshot',
  'created_by',
  'created_at',
  'updated_at',
  'completed_at',
] as const;

/** A command broadcast. */
export interface BroadcastRecord {
  broadcastId: string;
  commandType: string;
  payload: unknown;
  /** The device filter as stored (JSON; shape owned by the gateway). */
  targetFilter: unknown;
  /** The rollout plan as stored (JSON; shape owned by the gateway). */
  rollout: unknown;
  status: string;
  currentPhase: number;
  totalDevices: number;
  succeededCount: number;
  failedCount: number;
  failureThreshold: number | null;
  /** The persisted actor snapshot (decoded JSON; shape owned by actors/broadcast). */
  actorSnapshot: unknown;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** A broadcast row as selected with {@link BROADCAST_COLUMNS}. */
export interface BroadcastRow {
  broadcast_id: string;
  command_type: string;
  payload: unknown;
  target_filter: unknown;
  rollout: unknown;
  status: string;
  current_phase: number | string;
  total_devices: number | string;
  succeeded_count: number | string;
  failed_count: number | string;
  failure_threshold: number | string | null;
  actor_snapshot: unknown;
  created_by: string | null;
  created_at: unknown;
  updated_at: unknown;
  completed_at: unknown;
}

/** Decode a broadcast row. */
export function rowToBroadcast(codec: Codec, row: BroadcastRow): BroadcastRecord {
  return {
    broadcastId: row.broadcast_id,
    commandType: row.command_type,
    payload: codec.parseJson(row.payload) ?? {},
    targetFilter: codec.parseJson(row.target_filter) ?? {},
    rollout: codec.parseJson(row.rollout) ?? {},
    status: row.status,
    currentPhase: codec.parseInt(row.current_phase),
    totalDevices: codec.parseInt(row.total_devices),
    succeededCount: codec.parseInt(row.succeeded_count),
    failedCount: codec.parseInt(row.failed_count),
    failureThreshold: row.failure_threshold === null ? null : Number(row.failure_threshold),
    actorSnapshot: row.actor_snapshot === null ? null : codec.parseJson(row.actor_snapshot),
    createdBy: row.created_by,
    createdAt: codec.parseTime(row.created_at),
    updatedAt: codec.parseTime(row.updated_at),
    completedAt:
      row.completed_at === null || row.completed_at === undefined
        ? null
        : codec.parseTime(row.completed_at),
  };
}
