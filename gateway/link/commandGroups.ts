/**
 * Group commit for the command plane of one gateway. Creations (`POST …/commands`), acks
 * (from every socket and from REST) and deliveries (every session's push loop — a broadcast
 * or a batch waking thousands of sockets lands here — device polls, and the resume after a
 * reconnect, a whole fleet's after a gateway restart) are queued, and what arrives while a
 * group is being written goes to the database together in the next one: one statement per
 * group and kind instead of one per device message (gateway/commands/store/commands/insertCommand.ts,
 * ackCommands.ts, deliverCommands.ts, redeliverCommands.ts). There is no timer: an idle
 * queue writes on the next turn of the event loop, so a lone ack waits for nothing, and
 * under load the window is the time the groups in flight take — groups grow with the load by
 * themselves, as the engine's step commits do (actors/runtime/groupCommitQueue.ts, over the same
 * pump).
 *
 * Every caller awaits its own result, after the group's commit: a command before its POST is
 * answered or it is pushed, a DELIVERED command before its session writes it, an ack before
 * its `acked` frame. Two creations or deliveries for one device never share a group (one
 * statement does not see the other's rows): the later goes into a later group. An ack for
 * an unknown command is that ack's outcome alone; a group the database refuses as a whole is
 * written again one item at a time, so only the item at fault fails.
 */
import { createBatchQueue } from '../../actors/index.js';
import { type CloudStore } from '../../runtime/index.js';
import {
  ackCommands,
  type AckOutcome,
  type AckRequest,
} from '../commands/store/commands/ackCommands.js';
import { type CommandActor, type CommandRecord } from '../commands/store/commands/command.js';
import {
  deliverToDevices,
  type DeliveryRequest,
} from '../commands/store/commands/deliverCommands.js';
import { insertCommands, type CommandCreation } from '../commands/store/commands/insertCommand.js';
import { redeliverToDevices } from '../commands/store/commands/redeliverCommands.js';

/** The command plane's group commit (see the module comment). */
export interface CommandGroups {
  /**
   * Create a command with the others of its group; resolves once it is committed, with the
   * command, or undefined when its device does not exist.
   */
  create(creation: CommandCreation): Promise<CommandRecord | undefined>;
  /** Record an ack with the others of its group; resolves once it is committed. */
  ack(request: AckRequest): Promise<AckOutcome>;
  /**
   * Mark up to `limit` due commands of `deviceId` DELIVERED over its socket, with the other
   * devices' of its group; resolves with them, oldest first, once committed.
   */
  deliver(deviceId: string, limit: number): Promise<CommandRecord[]>;
  /** {@link CommandGroups.deliver} for a device that polls (`GET …/commands`), audited as its. */
  poll(deviceId: string, limit: number): Promise<CommandRecord[]>;
  /**
   * Deliver again up to `limit` of the commands `deviceId` left unacked on its previous
   * connection (not those in `exclude`), or fail those whose retries are used up, with the
   * other devices' of its group; resolves with them, oldest first, once committed.
   */
  redeliver(deviceId: string, limit: number, exclude: readonly string[]): Promise<CommandRecord[]>;
}

/** The kinds of group, as {@link CommandGroupOptions.onGroup} names them. */
export type CommandGroupKind = 'create' | 'ack' | 'deliver' | 'redeliver';

/** Sizes of {@link createCommandGroups}, and who watches them. */
export interface CommandGroupOptions {
  /** Most items (acks, or devices) in one group (default 256). */
  maxBatch?: number;
  /**
   * Most groups of each kind written at once. Default: one on PGlite; on PostgreSQL one for
   * creations and acks and two for deliveries (see {@link PIPELINED}).
   */
  maxInFlight?: number;
  /** Called as each group is written, with its number of items (for a metric). */
  onGroup?: (kind: CommandGroupKind, size: number) => void;
}

interface GroupSizes {
  maxBatch: number;
  maxInFlight: number;
  onGroup?: CommandGroupOptions['onGroup'];
}

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * A queue whose groups `write` as one; a group that fails as a whole is written again one
 * item at a time, so only the item at fault fails.
 */
function groupQueue<T, R>(
  kind: CommandGroupKind,
  options: GroupSizes,
  write: (items: T[]) => Promise<R[]>,
  /** Items that must not share a group with an earlier one wait for the next group. */
  keyOf?: (item: T) => string,
): (item: T) => Promise<R> {
  const writeGroup = async (group: Waiting<T, R>[]): Promise<void> => {
    let taken = group;
    if (keyOf) {
      const keys = new Set<string>();
      taken = [];
      for (const waiting of group) {
        const key = keyOf(waiting.item);
        if (keys.has(key)) queue.push(waiting);
        else {
          keys.add(key);
          taken.push(waiting);
        }
      }
    }
    try {
      options.onGroup?.(kind, taken.length);
    } catch {
      // a metric must not keep a group from its commit
    }
    try {
      const results = await write(taken.map((w) => w.item));
      taken.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (taken.length === 1) return taken[0]!.reject(error);
      for (const w of taken) await write([w.item]).then(([result]) => w.resolve(result!), w.reject);
    }
  };
  const queue = createBatchQueue({ ...options, write: writeGroup });
  return (item) => new Promise<R>((resolve, reject) => queue.push({ item, resolve, reject }));
}

/**
 * The kinds whose groups go two at a time on PostgreSQL. Deliveries come in floods (a
 * reconnecting fleet's resumes, a batch waking thousands of sockets) that a second statement
 * in flight drains sooner. Creations and acks come steadily, one per command: with a second
 * group allowed, an item that arrives while one is in flight goes at once, nearly alone, so
 * the groups stay small and the database pays a statement and a commit for each. One at a
 * time, it joins the next group instead. At 1,000 pushes/s (`bench gateway`, 8 alternating
 * pairs of runs, 2026-11-30) this took PostgreSQL's CPU per push from 0.56–0.63 to
 * 0.53–0.56 ms and the round trip's p99 median from 35 to 30 ms, with the same p50; a
 * broadcast's acks were no slower.
 */
const PIPELINED = new Set<CommandGroupKind>(['deliver', 'redeliver']);

/** Most creations in one group: the devices they notify fit in one NOTIFY payload. */
const MAX_CREATIONS = 64;

/**
 * The group commit of a gateway over `store`: deliveries are audited as `actor`'s, creations
 * notified as `origin`'s.
 */
export function createCommandGroups(
  store: CloudStore,
  actor: CommandActor,
  origin: string,
  now: () => Date,
  options: CommandGroupOptions = {},
): CommandGroups {
  const maxBatch = options.maxBatch ?? 256;
  const sizesOf = (kind: CommandGroupKind, most = maxBatch): GroupSizes => ({
    maxBatch: most,
    maxInFlight:
      options.maxInFlight ?? (store.dialect === 'postgres' && PIPELINED.has(kind) ? 2 : 1),
    ...(options.onGroup ? { onGroup: options.onGroup } : {}),
  });
  const create = groupQueue(
    'create',
    sizesOf('create', Math.min(maxBatch, MAX_CREATIONS)),
    (creations: CommandCreation[]) => insertCommands(store, creations, origin, now()),
    (creation) => creation.command.deviceId,
  );
  const ack = groupQueue('ack', sizesOf('ack'), (requests: AckRequest[]) =>
    ackCommands(store, requests),
  );
  const deliver = groupQueue(
    'deliver',
    sizesOf('deliver'),
    (requests: DeliveryRequest[]) => deliverToDevices(store, requests, now()),
    (request) => request.deviceId,
  );
  const redeliver = groupQueue(
    'redeliver',
    sizesOf('redeliver'),
    (requests: { deviceId: string; limit: number; exclude: readonly string[] }[]) =>
      redeliverToDevices(store, requests, actor, now()),
    (request) => request.deviceId,
  );
  return {
    create,
    ack,
    deliver: (deviceId, limit) => deliver({ deviceId, limit, via: 'websocket', actor }),
    poll: (deviceId, limit) =>
      deliver({ deviceId, limit, via: 'poll', actor: { actor: deviceId, role: 'device' } }),
    redeliver: (deviceId, limit, exclude) => redeliver({ deviceId, limit, exclude }),
  };
}
