/**
 * The store-and-forward recorder (docs/architecture.md#cloud-and-edge): the runtime's `onSettled` hook that writes a
 * signed transaction record into `saf_pending_transactions` in the SAME SQLite transaction
 * that commits a workflow's terminal status. A payment approved offline and its record
 * therefore exist together or not at all: a power cut can lose neither one alone (the edge
 * store runs with `synchronous=FULL`, runtime/store/sqlite/openSqliteStore.ts).
 *
 * Which workflows get a record: those that end COMPLETED while `isOnline()` is false or that
 * the agent started offline (`state.edge.online === false`: the connectivity the workflow's
 * routes decided on), and every completion of a definition with `store_and_forward: true`.
 * Sub-workflows (they have a parent) are part of their parent's transaction and get none
 * unless their own definition asks. FAILED, FAILED_ROLLED_BACK and CANCELLED workflows get
 * none: the record has no status, and the cloud settles every record it accepts — a failed
 * payment is not one.
 * A workflow that already has a record (of any status) does not get a second.
 *
 * Inside the transaction the recorder takes the next sequence number (nextSafSequence.ts),
 * builds and signs the record (buildSafRecord.ts: card as token + last four + AES-256-GCM
 * payload, final state sanitized) and queues it PENDING. A record that cannot be built
 * (an untokenized card, a record over the size limit) fails the commit with a SafError: the
 * workflow does not end, and the caller sees why.
 */
import type { SettledHook } from '../../actors/index.js';
import { asEdge, type EdgeStore } from '../../runtime/index.js';
import { buildSafRecord } from './buildSafRecord.js';
import { assertCardKey } from './cardPayload.js';
import { SafError } from './errors.js';
import { hasPendingRecord, insertPendingRecord } from './insertPendingRecord.js';
import { nextSafSequence } from './nextSafSequence.js';
import { readSafBacklog } from './readSafBacklog.js';
import {
  evaluateSafLimits,
  hasSafLimits,
  type SafLimitRequest,
  type SafLimits,
  type SafLimitVerdict,
} from './safLimits.js';

/** Events of the recorder (emitted while the commit is in progress: it may still roll back). */
export type SafRecorderEvent = {
  type: 'edge.saf.sanitized';
  workflowId: string;
  /** Where values were taken out of the final state (paths never hold the values). */
  paths: string[];
};

/** What the recorder needs. */
export interface SafRecorderOptions {
  /** The device id the records carry (must be the id the device authenticates with). */
  deviceId: string;
  /** The device secret that signs records (HMAC-SHA256). */
  deviceSecret: string;
  /** Whether the device can reach the cloud now; read when a workflow settles. */
  isOnline(): boolean;
  /** The 32-byte AES-256-GCM key card payloads are encrypted with. */
  cardKey: Buffer;
  /** Completion time of records (default: the wall clock). */
  clock?: () => Date;
  /** Told when a record's final state had card data or secrets taken out. */
  onEvent?: (event: SafRecorderEvent) => void;
}

/** The PENDING backlog as the agent shows it. */
export interface SafBacklogSummary {
  count: number;
  amountMinor: number;
  oldestCreatedAt: string | null;
}

/** The recorder of one device. */
export interface SafRecorder {
  /** Hand to `createRuntime({ onSettled })`. */
  onSettled: SettledHook;
  /** Whether one more payment may be approved offline under `limits`. */
  checkLimits(
    store: EdgeStore,
    request: SafLimitRequest,
    limits: SafLimits,
  ): Promise<SafLimitVerdict>;
  /** The records waiting for upload. */
  backlog(store: EdgeStore): Promise<SafBacklogSummary>;
}

const wantsRecord = (snapshot: unknown) =>
  snapshot !== null &&
  typeof snapshot === 'object' &&
  (snapshot as { store_and_forward?: unknown }).store_and_forward === true;

/** Create the recorder; throws SAF_KEY_INVALID for a card key that is not 32 bytes. */
export function createSafRecorder(options: SafRecorderOptions): SafRecorder {
  assertCardKey(options.cardKey);
  if (options.deviceSecret.length === 0)
    throw new SafError('SAF_KEY_INVALID', 'the device secret that signs records is empty');
  const clock = options.clock ?? (() => new Date());
  const emit = (event: SafRecorderEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // a listener's failure must not fail a payment's commit
    }
  };

  const onSettled: SettledHook = ({ record, status, state }) => {
    if (status !== 'COMPLETED') return undefined;
    const always = wantsRecord(record.definitionSnapshot);
    // A payment the agent started offline (`edge.online: false`, what its routes decided on)
    // is an offline payment even when the link came back before its last commit: without a
    // record it would be approved and never settled (found by the chaos run, test/chaos).
    const ranOffline = (state as { edge?: { online?: unknown } }).edge?.online === false;
    if (!always && (record.parentWorkflowId !== null || (options.isOnline() && !ranOffline)))
      return undefined;
    return async (handle) => {
      const tx = asEdge(handle);
      if (await hasPendingRecord(tx, record.id)) return;
      const now = clock();
      const sequence = await nextSafSequence(tx, now);
      const built = buildSafRecord(
        {
          workflowId: record.id,
          workflowType: record.workflowType,
          workflowVersion: record.workflowVersion,
          createdAt: record.createdAt,
          state,
        },
        {
          deviceId: options.deviceId,
          deviceSecret: options.deviceSecret,
          cardKey: options.cardKey,
          sequence,
          completedAt: now,
        },
      );
      await insertPendingRecord(tx, built.record, now);
      if (built.removed.length > 0)
        emit({ type: 'edge.saf.sanitized', workflowId: record.id, paths: built.removed });
    };
  };

  return {
    onSettled,
    async checkLimits(store, request, limits) {
      // no limit, nothing to read: the backlog figures take a pass over every PENDING record
      if (!hasSafLimits(limits)) return { ok: true };
      return evaluateSafLimits(await readSafBacklog(store), request, limits, clock());
    },
    async backlog(store) {
      const { count, amountMinor, oldestCreatedAt } = await readSafBacklog(store);
      return { count, amountMinor, oldestCreatedAt };
    },
  };
}
