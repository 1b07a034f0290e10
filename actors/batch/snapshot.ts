/**
 * Batch snapshots: the first one, the next one (pure), and the JSON form kept in
 * `command_batches.actor_snapshot` — `{machine, version, value, context}`. A snapshot that
 * does not restore (hand-edited, or written by a machine whose states are gone) is a
 * {@link BatchSnapshotError} on that batch, never a process crash.
 */
import type { SnapshotFrom } from 'xstate';
import { pureInitialSnapshot, pureTransition } from '../pureTransition.js';
import { SaffronError, type BATCH_STATUSES } from '../../runtime/index.js';
import {
  BATCH_ITEM_STATUSES,
  BATCH_STATE_STATUS,
  batchMachine,
  type BatchItemStatus,
  type BatchMachineContext,
} from './batchMachine.js';
import type { BatchEvent } from './events.js';

/** A batch status (command_batches.status). */
export type BatchStatus = (typeof BATCH_STATUSES)[number];
/** A live batch snapshot. */
export type BatchSnapshot = SnapshotFrom<typeof batchMachine>;
type StateName = keyof typeof BATCH_STATE_STATUS;

/** What is stored in `actor_snapshot`. */
export interface PersistedBatchSnapshot {
  machine: 'batch';
  version: 1;
  value: StateName;
  context: BatchMachineContext;
}

/** A stored batch snapshot that cannot be restored. */
export class BatchSnapshotError extends SaffronError {
  override readonly name = 'BatchSnapshotError';
  constructor(message: string) {
    super('BATCH_SNAPSHOT_INVALID', message);
  }
}

const ITEM_STATUSES = new Set<string>(BATCH_ITEM_STATUSES);

function invalid(persisted: unknown): string | undefined {
  const p = persisted as Partial<PersistedBatchSnapshot> | null;
  if (p === null || typeof p !== 'object' || p.machine !== 'batch') return 'not a batch snapshot';
  if (p.version !== 1) return `unknown snapshot version ${String(p.version)}`;
  if (typeof p.value !== 'string' || !(p.value in BATCH_STATE_STATUS))
    return `unknown state ${String(p.value)}`;
  const c = p.context;
  if (typeof c !== 'object' || c === null) return 'no context';
  if (c.mode !== 'SEQUENTIAL' && c.mode !== 'PARALLEL') return 'bad mode';
  if (typeof c.stopOnFailure !== 'boolean') return 'bad stopOnFailure';
  if (!Array.isArray(c.commands) || !Array.isArray(c.items)) return 'bad commands or items';
  const bad = c.items.find(
    (i) =>
      typeof i?.commandId !== 'string' ||
      typeof i.deviceId !== 'string' ||
      !Number.isInteger(i.seq) ||
      c.commands[i.seq] === undefined ||
      !ITEM_STATUSES.has(i.status),
  );
  return bad === undefined ? undefined : 'bad item';
}

/** The snapshot of a new batch (state `pending`). */
export function initialBatchSnapshot(context: BatchMachineContext): BatchSnapshot {
  return pureInitialSnapshot(batchMachine, context);
}

/** Rebuild a batch's snapshot from its stored JSON; throws {@link BatchSnapshotError}. */
export function restoreBatchSnapshot(persisted: unknown, batchId: string): BatchSnapshot {
  const problem = invalid(persisted);
  if (problem)
    throw new BatchSnapshotError(`batch ${batchId}: snapshot does not restore (${problem})`);
  const p = persisted as PersistedBatchSnapshot;
  return batchMachine.resolveState({ value: p.value, context: p.context });
}

/** Apply `event`; an event the current state ignores leaves the snapshot as it is. */
export function nextBatchSnapshot(current: BatchSnapshot, event: BatchEvent): BatchSnapshot {
  return pureTransition(batchMachine, current, event);
}

/** The JSON form to store. */
export function persistBatchSnapshot(snapshot: BatchSnapshot): PersistedBatchSnapshot {
  return { machine: 'batch', version: 1, value: snapshot.value, context: snapshot.context };
}

/** The batch status a snapshot means. */
export function batchStatusOf(snapshot: BatchSnapshot): BatchStatus {
  return BATCH_STATE_STATUS[snapshot.value];
}

/** Items per status, plus the total. */
export type BatchProgress = Record<BatchItemStatus, number> & { total: number };

/** Count a snapshot's items by status. */
export function batchProgress(snapshot: BatchSnapshot): BatchProgress {
  const progress = Object.fromEntries(BATCH_ITEM_STATUSES.map((s) => [s, 0])) as BatchProgress;
  progress.total = snapshot.context.items.length;
  for (const item of snapshot.context.items) progress[item.status]++;
  return progress;
}
