/**
 * The command batch machine: many commands to one or many devices, released in PARALLEL
 * (every command at once) or SEQUENTIALLY per device (a device's next command only after it
 * acked the previous one). The machine never touches the database: it decides which items
 * are released (WAITING → PENDING) and the host (host.ts) creates exactly those commands, in
 * the transaction that saves the snapshot, then feeds back what the devices reported.
 *
 * | state           | event                         | next                                              |
 * |-----------------|-------------------------------|---------------------------------------------------|
 * | pending         | batch.start                   | running; releases the first items                 |
 * | pending/running | batch.cancel                  | cancelled; WAITING items → CANCELLED              |
 * | running         | batch.commands.updated        | running; statuses recorded, next items released   |
 * | running         | (every item settled)          | completed (all EXECUTED) / failed (none) / partiallyFailed |
 * | cancelled       | batch.commands.updated        | cancelled; statuses recorded (late acks)          |
 *
 * Item statuses: WAITING (not released yet), the command statuses PENDING, DELIVERED,
 * EXECUTED, FAILED, CANCELLED, and SKIPPED — never sent because an earlier command to the
 * same device failed (SEQUENTIAL with `stopOnFailure`). Settled: EXECUTED, FAILED,
 * CANCELLED, SKIPPED. Progress is counted from item statuses.
 *
 * Like the device machine it is used only through XState's pure `transition()`, so any
 * gateway holding the batch row's lock can apply the next event; no timers live in it
 * (expiry is the command's `expires_at`, enforced by the command sweep).
 */
import { assign, setup } from 'xstate';
import type { BatchStatus } from './snapshot.js';
import type { BatchCommandUpdate, BatchEvent } from './events.js';

/** Statuses of one batch item. */
export const BATCH_ITEM_STATUSES = [
  'WAITING',
  'PENDING',
  'DELIVERED',
  'EXECUTED',
  'FAILED',
  'CANCELLED',
  'SKIPPED',
] as const;
/** A batch item status. */
export type BatchItemStatus = (typeof BATCH_ITEM_STATUSES)[number];

/** Item statuses that no longer change. */
export const SETTLED_ITEM_STATUSES: ReadonlySet<BatchItemStatus> = new Set([
  'EXECUTED',
  'FAILED',
  'CANCELLED',
  'SKIPPED',
]);

/** One command of the batch, as the batch sees it. */
export interface BatchCommandSpec {
  command_type: string;
  payload: unknown;
  max_retries: number;
  /** Lifetime of each command from its release (it fails as `expired` after). */
  expires_in_seconds?: number;
  /** The command version the payload was validated against (absent: none registered). */
  command_version?: string;
}

/** One (device, command) pair of the batch. */
export interface BatchItem {
  /** Assigned at creation, so a repeated release cannot create the command twice. */
  commandId: string;
  deviceId: string;
  /** Index into `commands`: the order of commands per device. */
  seq: number;
  status: BatchItemStatus;
}

/** What the batch machine remembers. */
export interface BatchMachineContext {
  mode: 'SEQUENTIAL' | 'PARALLEL';
  /** SEQUENTIAL: a device's remaining commands are SKIPPED after one fails. */
  stopOnFailure: boolean;
  commands: BatchCommandSpec[];
  /** Ordered by device, then seq. */
  items: BatchItem[];
}

const inFlight = (s: BatchItemStatus) => s === 'PENDING' || s === 'DELIVERED';

/** Release what may go now (pure): all WAITING items, or each device's next one. */
export function releaseItems(context: BatchMachineContext): BatchItem[] {
  if (context.mode === 'PARALLEL')
    return context.items.map((i) => (i.status === 'WAITING' ? { ...i, status: 'PENDING' } : i));
  const items = context.items.slice();
  const byDevice = new Map<string, number[]>();
  items.forEach((item, index) => {
    const list = byDevice.get(item.deviceId);
    if (list) list.push(index);
    else byDevice.set(item.deviceId, [index]);
  });
  for (const indexes of byDevice.values()) {
    indexes.sort((a, b) => items[a]!.seq - items[b]!.seq);
    if (indexes.some((i) => inFlight(items[i]!.status))) continue;
    const next = indexes.find((i) => items[i]!.status === 'WAITING');
    if (next === undefined) continue;
    const failedBefore = indexes.some(
      (i) =>
        items[i]!.seq < items[next]!.seq &&
        (items[i]!.status === 'FAILED' || items[i]!.status === 'CANCELLED'),
    );
    if (failedBefore && context.stopOnFailure) {
      for (const i of indexes)
        if (items[i]!.status === 'WAITING') items[i] = { ...items[i]!, status: 'SKIPPED' };
    } else items[next] = { ...items[next]!, status: 'PENDING' };
  }
  return items;
}

/** Record reported statuses (pure); settled items and unknown ids are left alone. */
export function recordUpdates(
  context: BatchMachineContext,
  updates: readonly BatchCommandUpdate[],
): BatchItem[] {
  const byId = new Map(updates.map((u) => [u.commandId, u.status]));
  return context.items.map((item) => {
    const status = byId.get(item.commandId);
    if (status === undefined || status === item.status) return item;
    if (SETTLED_ITEM_STATUSES.has(item.status) || item.status === 'WAITING') return item;
    return { ...item, status };
  });
}

const settled = (context: BatchMachineContext) =>
  context.items.every((i) => SETTLED_ITEM_STATUSES.has(i.status));

/** The batch machine. */
export const batchMachine = setup({
  types: {
    context: {} as BatchMachineContext,
    events: {} as BatchEvent,
    input: {} as BatchMachineContext,
  },
  guards: {
    allExecuted: ({ context }) => context.items.every((i) => i.status === 'EXECUTED'),
    noneExecuted: ({ context }) =>
      settled(context) && !context.items.some((i) => i.status === 'EXECUTED'),
    allSettled: ({ context }) => settled(context),
  },
  actions: {
    release: assign(({ context }) => ({ items: releaseItems(context) })),
    record: assign(({ context, event }) =>
      event.type === 'batch.commands.updated'
        ? { items: recordUpdates(context, event.updates) }
        : {},
    ),
    cancelWaiting: assign(({ context }) => ({
      items: context.items.map((i) =>
        i.status === 'WAITING' ? { ...i, status: 'CANCELLED' as const } : i,
      ),
    })),
  },
}).createMachine({
  id: 'batch',
  initial: 'pending',
  context: ({ input }) => input,
  states: {
    pending: {
      on: {
        'batch.start': { target: 'running', actions: 'release' },
        'batch.cancel': { target: 'cancelled', actions: 'cancelWaiting' },
      },
    },
    running: {
      always: [
        { guard: 'allExecuted', target: 'completed' },
        { guard: 'noneExecuted', target: 'failed' },
        { guard: 'allSettled', target: 'partiallyFailed' },
      ],
      on: {
        'batch.commands.updated': { actions: ['record', 'release'] },
        'batch.cancel': { target: 'cancelled', actions: 'cancelWaiting' },
      },
    },
    completed: { type: 'final' },
    partiallyFailed: { type: 'final' },
    failed: { type: 'final' },
    cancelled: {
      on: { 'batch.commands.updated': { actions: 'record' } },
    },
  },
});

/** The machine's states and the batch status each one means. */
export const BATCH_STATE_STATUS = {
  pending: 'PENDING',
  running: 'IN_PROGRESS',
  completed: 'COMPLETED',
  partiallyFailed: 'PARTIALLY_FAILED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
} as const satisfies Record<string, BatchStatus>;
