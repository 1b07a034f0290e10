/**
 * The batch actor host: create a batch (its row and first snapshot), and apply events to a
 * persisted batch — lock the row, restore the snapshot, bring it up to date with what the
 * devices reported (command statuses in device_commands), apply the event, create the
 * commands the machine released, cancel undelivered ones when it was cancelled, write the
 * snapshot, status and counts back and notify the gateways — in one transaction. So a
 * released command exists exactly when the snapshot that released it does, and any gateway
 * can step any batch: the row lock makes it one writer at a time.
 *
 * Stepping is idempotent (it reconciles from the database rather than counting events), so
 * a lost trigger — an ack hook on a gateway that died, an expiry noticed by the sweep — is
 * made good by the next step of the periodic driver.
 */
import { randomUUID } from 'node:crypto';
import { notifyCommands, type CloudStore, type CloudHandle } from '../../runtime/index.js';
import { appendCommandAudit } from '../commands/store/commands/appendCommandAudit.js';
import { cancelPendingCommands } from '../commands/store/commands/cancelPendingCommands.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { type BatchRecord } from './store/batches/batch.js';
import { getBatch } from './store/batches/getBatch.js';
import { insertBatch } from './store/batches/insertBatch.js';
import { insertBatchCommands } from './store/batches/insertBatchCommands.js';
import { listBatchCommandStatuses } from './store/batches/listBatchCommandStatuses.js';
import { lockBatch } from './store/batches/lockBatch.js';
import { saveBatch } from './store/batches/saveBatch.js';
import {
  BATCH_ITEM_STATUSES,
  type BatchCommandSpec,
  type BatchItem,
  type BatchItemStatus,
  batchEvents,
  type BatchEvent,
  batchProgress,
  batchStatusOf,
  initialBatchSnapshot,
  nextBatchSnapshot,
  persistBatchSnapshot,
  restoreBatchSnapshot,
  type BatchProgress,
  type BatchSnapshot,
  type BatchStatus,
} from '../../actors/index.js';

/** A batch to create. */
export interface BatchSpec {
  name: string | null;
  mode: 'SEQUENTIAL' | 'PARALLEL';
  stopOnFailure: boolean;
  /** The commands every device gets, in order. */
  commands: BatchCommandSpec[];
  deviceIds: readonly string[];
  /** The batch's id when one was reserved for it (a batch held for approval). */
  batchId?: string;
}

const TERMINAL: ReadonlySet<BatchStatus> = new Set([
  'COMPLETED',
  'PARTIALLY_FAILED',
  'FAILED',
  'CANCELLED',
]);

/** True for a batch status that no longer changes. */
export function isTerminalBatchStatus(status: string): boolean {
  return TERMINAL.has(status as BatchStatus);
}

/**
 * Insert a new batch (PENDING, nothing sent yet) with command ids assigned to every item;
 * `stepBatch(…, start)` sends the first commands. Call inside a transaction.
 */
export async function insertNewBatch(
  h: CloudHandle,
  spec: BatchSpec,
  actor: CommandActor,
  now: Date,
  ids: () => string = randomUUID,
): Promise<BatchRecord> {
  const items: BatchItem[] = [];
  for (const deviceId of spec.deviceIds)
    spec.commands.forEach((_, seq) =>
      items.push({ commandId: ids(), deviceId, seq, status: 'WAITING' }),
    );
  const snapshot = initialBatchSnapshot({
    mode: spec.mode,
    stopOnFailure: spec.stopOnFailure,
    commands: spec.commands,
    items,
  });
  return insertBatch(
    h,
    {
      batchId: spec.batchId ?? ids(),
      name: spec.name,
      executionMode: spec.mode,
      totalCommands: items.length,
      actorSnapshot: persistBatchSnapshot(snapshot),
    },
    actor,
    now,
  );
}

/** Options of {@link stepBatch}. */
export interface BatchStepOptions {
  now: Date;
  /** Who applies the step: the audit actor of released and cancelled commands. */
  actor: CommandActor;
  /** This gateway's id in command notifications. */
  origin: string;
  /** Skip (undefined) rather than wait when another transaction holds the batch. */
  skipLocked?: boolean;
}

/** What a step did. */
export interface BatchStep {
  batch: BatchRecord;
  snapshot: BatchSnapshot;
  previousStatus: BatchStatus;
  progress: BatchProgress;
  /** Devices that got new commands: push to them. */
  woken: string[];
}

const ITEM_STATUSES = new Set<string>(BATCH_ITEM_STATUSES);

/**
 * Apply `event` (or nothing: just reconcile) to batch `batchId`; undefined when it does not
 * exist or — with `skipLocked` — another gateway is stepping it.
 */
export async function stepBatch(
  store: CloudStore,
  batchId: string,
  event: BatchEvent | undefined,
  options: BatchStepOptions,
): Promise<BatchStep | undefined> {
  const { now, actor } = options;
  return store.transaction(async (tx) => {
    const row = await lockBatch(tx, batchId, { skipLocked: options.skipLocked ?? false });
    if (!row) return undefined;
    let snapshot = restoreBatchSnapshot(row.actorSnapshot, batchId);
    const storedJson = JSON.stringify(row.actorSnapshot);
    const previousStatus = batchStatusOf(snapshot);
    const known = await listBatchCommandStatuses(tx, batchId);
    if (event) snapshot = nextBatchSnapshot(snapshot, event);
    const woken = new Set<string>();
    // each round records what the devices reported and releases what that allows; a round
    // that releases nothing new ends the loop (at most one round per command per device)
    for (let round = 0; round <= snapshot.context.items.length; round++) {
      const updates = snapshot.context.items.flatMap((item) => {
        const status = known.get(item.commandId);
        // a delivered command whose row is gone went with its device (ON DELETE CASCADE)
        if (status === undefined && item.status === 'DELIVERED')
          return [{ commandId: item.commandId, status: 'FAILED' as const }];
        return status !== undefined && status !== item.status && ITEM_STATUSES.has(status)
          ? [{ commandId: item.commandId, status: status as BatchItemStatus }]
          : [];
      });
      if (updates.length > 0) snapshot = nextBatchSnapshot(snapshot, batchEvents.updated(updates));
      const released = snapshot.context.items.filter(
        (i) => i.status === 'PENDING' && !known.has(i.commandId),
      );
      if (released.length === 0) break;
      const { inserted, missing } = await insertBatchCommands(
        tx,
        batchId,
        released.map((item) => {
          const spec = snapshot.context.commands[item.seq]!;
          return {
            commandId: item.commandId,
            deviceId: item.deviceId,
            commandType: spec.command_type,
            payload: spec.payload,
            maxRetries: spec.max_retries,
            expiresAt:
              spec.expires_in_seconds !== undefined
                ? new Date(now.getTime() + spec.expires_in_seconds * 1000)
                : null,
            sequence: item.seq,
            commandVersion: spec.command_version ?? null,
          };
        }),
        { createdBy: row.createdBy, actor },
        now,
      );
      for (const c of inserted) {
        known.set(c.commandId, 'PENDING');
        woken.add(c.deviceId);
      }
      // a device deleted since the batch was created: its command fails in the next round
      for (const c of missing) known.set(c.commandId, 'FAILED');
    }
    let cancelled = 0;
    if (snapshot.value === 'cancelled' && previousStatus !== 'CANCELLED') {
      const stopped = await cancelPendingCommands(tx, { batchId }, actor, 'batch cancelled', now);
      cancelled = stopped.length;
      if (stopped.length > 0)
        snapshot = nextBatchSnapshot(
          snapshot,
          batchEvents.updated(
            stopped.map((c) => ({ commandId: c.commandId, status: 'CANCELLED' })),
          ),
        );
    }
    const status = batchStatusOf(snapshot);
    const progress = batchProgress(snapshot);
    const persisted = persistBatchSnapshot(snapshot);
    if (JSON.stringify(persisted) !== storedJson) {
      await saveBatch(
        tx,
        batchId,
        {
          status,
          completedCount: progress.EXECUTED,
          failedCount: progress.FAILED,
          actorSnapshot: persisted,
          completedAt: isTerminalBatchStatus(status) ? (row.completedAt ?? now) : null,
        },
        now,
      );
    }
    if (status !== previousStatus && isTerminalBatchStatus(status))
      await appendCommandAudit(
        tx,
        actor,
        [
          {
            event: status === 'CANCELLED' ? 'BATCH_CANCELLED' : 'BATCH_FINISHED',
            batchId,
            details: {
              status,
              previous_status: previousStatus,
              executed: progress.EXECUTED,
              failed: progress.FAILED,
              skipped: progress.SKIPPED,
              cancelled: progress.CANCELLED,
              ...(status === 'CANCELLED' ? { cancelled_pending: cancelled } : {}),
            },
          },
        ],
        now,
      );
    await notifyCommands(tx, [...woken], options.origin);
    const batch = (await getBatch(tx, batchId))!;
    return { batch, snapshot, previousStatus, progress, woken: [...woken] };
  });
}
