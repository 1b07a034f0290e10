/**
 * Broadcast snapshots: the first one, the next one (pure), and the JSON form kept in
 * `command_broadcasts.actor_snapshot` — `{machine, version, value, context}`. A snapshot
 * that does not restore is a {@link BroadcastSnapshotError} on that broadcast, never a
 * process crash.
 */
import type { SnapshotFrom } from 'xstate';
import { pureInitialSnapshot, pureTransition } from '../pureTransition.js';
import { SaffronError, type BROADCAST_STATUSES } from '../../runtime/index.js';
import {
  BROADCAST_STATE_STATUS,
  broadcastMachine,
  type BroadcastMachineContext,
} from './broadcastMachine.js';
import type { BroadcastEvent } from './events.js';

/** A broadcast status (command_broadcasts.status). */
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];
/** A live broadcast snapshot. */
export type BroadcastSnapshot = SnapshotFrom<typeof broadcastMachine>;
type StateName = keyof typeof BROADCAST_STATE_STATUS;

/** What is stored in `actor_snapshot`. */
export interface PersistedBroadcastSnapshot {
  machine: 'broadcast';
  version: 1;
  value: StateName;
  context: BroadcastMachineContext;
}

/** A stored broadcast snapshot that cannot be restored. */
export class BroadcastSnapshotError extends SaffronError {
  override readonly name = 'BroadcastSnapshotError';
  constructor(message: string) {
    super('BROADCAST_SNAPSHOT_INVALID', message);
  }
}

function invalid(persisted: unknown): string | undefined {
  const p = persisted as Partial<PersistedBroadcastSnapshot> | null;
  if (p === null || typeof p !== 'object' || p.machine !== 'broadcast')
    return 'not a broadcast snapshot';
  if (p.version !== 1) return `unknown snapshot version ${String(p.version)}`;
  if (typeof p.value !== 'string' || !(p.value in BROADCAST_STATE_STATUS))
    return `unknown state ${String(p.value)}`;
  const c = p.context;
  if (typeof c !== 'object' || c === null) return 'no context';
  if (
    !Array.isArray(c.phases) ||
    c.phases.length === 0 ||
    c.phases.some((x) => typeof x !== 'number')
  )
    return 'bad phases';
  if (!Number.isInteger(c.phase) || c.phase < 0 || c.phase > c.phases.length) return 'bad phase';
  if (!Array.isArray(c.history)) return 'bad history';
  if (typeof c.waitSeconds !== 'number' || typeof c.total !== 'number') return 'bad numbers';
  return undefined;
}

/** The snapshot of a new broadcast (state `pending`). */
export function initialBroadcastSnapshot(context: BroadcastMachineContext): BroadcastSnapshot {
  return pureInitialSnapshot(broadcastMachine, context);
}

/** Rebuild a broadcast's snapshot from its stored JSON; throws {@link BroadcastSnapshotError}. */
export function restoreBroadcastSnapshot(
  persisted: unknown,
  broadcastId: string,
): BroadcastSnapshot {
  const problem = invalid(persisted);
  if (problem)
    throw new BroadcastSnapshotError(
      `broadcast ${broadcastId}: snapshot does not restore (${problem})`,
    );
  const p = persisted as PersistedBroadcastSnapshot;
  return broadcastMachine.resolveState({ value: p.value, context: p.context });
}

/** Apply `event`; an event the current state ignores leaves the snapshot as it is. */
export function nextBroadcastSnapshot(
  current: BroadcastSnapshot,
  event: BroadcastEvent,
): BroadcastSnapshot {
  return pureTransition(broadcastMachine, current, event);
}

/** The JSON form to store. */
export function persistBroadcastSnapshot(snapshot: BroadcastSnapshot): PersistedBroadcastSnapshot {
  return { machine: 'broadcast', version: 1, value: snapshot.value, context: snapshot.context };
}

/** The broadcast status a snapshot means. */
export function broadcastStatusOf(snapshot: BroadcastSnapshot): BroadcastStatus {
  return BROADCAST_STATE_STATUS[snapshot.value];
}
