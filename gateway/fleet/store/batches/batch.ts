/**
 * The command batch record as operations return it. A batch is an actor (actors/batch/)
 * persisted as a JSON snapshot in its row; the row's status and counts are the snapshot's
 * projection, written in the same transaction, so lists and filters need not parse JSON.
 * Cloud tier only.
 */
import type { Codec } from '../../../../runtime/index.js';

/** How a batch releases its commands (command_batches.execution_mode CHECK). */
export const BATCH_EXECUTION_MODES = ['SEQUENTIAL', 'PARALLEL'] as const;
/** A batch execution mode. */
export type BatchExecutionMode = (typeof BATCH_EXECUTION_MODES)[number];

/** The columns a batch read returns. */
export const BATCH_COLUMNS = [
  'batch_id',
  'name',
  'execution_mode',
  'status',
  'total_commands',
  'completed_count',
  'failed_count',
  'actor_snapshot',
  'created_by',
  'created_at',
  'updated_at',
  'completed_at',
] as const;

/** A command batch. */
export interface BatchRecord {
  batchId: string;
  name: string | null;
  executionMode: BatchExecutionMode;
  status: string;
  totalCommands: number;
  completedCount: number;
  failedCount: number;
  /** The persisted actor snapshot (decoded JSON; shape owned by actors/batch). */
  actorSnapshot: unknown;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** A batch row as selected with {@link BATCH_COLUMNS}. */
export interface BatchRow {
  batch_id: string;
  name: string | null;
  execution_mode: string;
  status: string;
  total_commands: number | string;
  completed_count: number | string;
  failed_count: number | string;
  actor_snapshot: unknown;
  created_by: string | null;
  created_at: unknown;
  updated_at: unknown;
  completed_at: unknown;
}

/** Decode a batch row. */
export function rowToBatch(codec: Codec, row: BatchRow): BatchRecord {
  return {
    batchId: row.batch_id,
    name: row.name,
    executionMode: row.execution_mode === 'SEQUENTIAL' ? 'SEQUENTIAL' : 'PARALLEL',
    status: row.status,
    totalCommands: codec.parseInt(row.total_commands),
    completedCount: codec.parseInt(row.completed_count),
    failedCount: codec.parseInt(row.failed_count),
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
