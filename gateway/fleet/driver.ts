/**
 * The fleet driver of one gateway: it moves batches and broadcasts and fires command
 * schedules. Durable state lives in the rows (actors' snapshots, schedules' `next_run_at`);
 * the driver only decides when to step them:
 *
 * - at once, when an operator acts (create, cancel, pause, resume) — the route waits;
 * - soon, when a device acks one of their commands (the ack hook, link/commandEvents.ts):
 *   acks are coalesced per batch or broadcast and stepped one at a time, so 10,000 acks
 *   make a handful of steps, not 10,000 row updates;
 * - periodically (`tickIntervalMs`, on the injected clock's time): every unfinished batch
 *   and broadcast is reconciled — expiry, retries used up, acks that landed on another
 *   gateway, the wait between phases — and due schedules fire. On PostgreSQL each job runs
 *   under its own advisory lock, one gateway at a time; rows another gateway is stepping
 *   are skipped (SKIP LOCKED), and a schedule's tick is claimed with a compare-and-set, so
 *   correctness never rests on the lock alone.
 *
 * Devices that got commands are woken here (local sockets) and through NOTIFY (sockets on
 * other gateways, sent in the step's transaction). A broadcast's phase creates the commands
 * of this gateway's idle sockets DELIVERED, and they are pushed once the step has committed.
 */
import { randomUUID } from 'node:crypto';
import { bcEvents, batchEvents, type BatchEvent, type BroadcastEvent } from '../../actors/index.js';
import { stepBatch, type BatchStep } from './batchHost.js';
import { stepBroadcast, type BroadcastStep } from './broadcastHost.js';
import { createBackgroundLoop, withAdvisoryLock } from '../../runtime/index.js';
import { type CommandActor } from '../commands/store/commands/command.js';
import { listActiveBatchIds } from './store/batches/listBatches.js';
import { listActiveBroadcastIds } from './store/broadcasts/listBroadcasts.js';
import type { GatewayContext } from '../context.js';
import { fireDueSchedules, type ScheduleReport } from './scheduler.js';

/** Options of the fleet driver. */
export interface FleetDriverOptions {
  /** Period of the reconcile-and-schedule pass (default 1 s). */
  tickIntervalMs?: number;
}

/** What one periodic pass did; `undefined` parts ran on another gateway. */
export interface FleetTickReport {
  batches: number | undefined;
  broadcasts: number | undefined;
  schedules: ScheduleReport | undefined;
}

/** The fleet driver of one gateway. */
export interface FleetDriver {
  /** This gateway's id in command notifications. */
  readonly nodeId: string;
  /** The actor of the driver's own changes (audit rows). */
  readonly actor: CommandActor;
  /** Apply `event` to a batch now, waiting for its lock; wakes the devices it sent to. */
  stepBatch(
    batchId: string,
    event: BatchEvent | undefined,
    actor?: CommandActor,
  ): Promise<BatchStep | undefined>;
  /** Apply `event` to a broadcast now, waiting for its lock; wakes the devices it sent to. */
  stepBroadcast(
    broadcastId: string,
    event: BroadcastEvent | undefined,
    actor?: CommandActor,
  ): Promise<BroadcastStep | undefined>;
  /** Step a batch or broadcast soon (coalesced). */
  poke(kind: 'batch' | 'broadcast', id: string): void;
  /** Run one periodic pass now (it also runs on its interval). */
  tick(): Promise<FleetTickReport>;
  /** Resolves once every poke made so far has been stepped. */
  settle(): Promise<void>;
  /** Listen to acks and start the periodic pass. */
  start(): void;
  /** Stop, and wait for the work in flight. */
  close(): Promise<void>;
}

/** Create the fleet driver of `ctx`'s gateway. */
export function createFleetDriver(
  ctx: GatewayContext,
  options: FleetDriverOptions = {},
): FleetDriver {
  const nodeId = randomUUID();
  const actor: CommandActor = { actor: `gateway:${nodeId}`, role: 'system' };
  const log = ctx.app.log;
  const dirty = { batch: new Set<string>(), broadcast: new Set<string>() };
  const background = new Set<Promise<unknown>>();
  let draining: Promise<void> | undefined;
  let stopListening: (() => void) | undefined;
  let closed = false;

  const track = <T>(work: Promise<T>): Promise<T | undefined> => {
    const guarded = work.catch((error: unknown) => {
      log.error({ err: error }, 'fleet driver work failed');
      return undefined;
    });
    background.add(guarded);
    void guarded.finally(() => background.delete(guarded));
    return guarded;
  };

  const leader = async <T>(job: string, work: () => Promise<T>): Promise<T | undefined> => {
    const driver = ctx.store.driver;
    if (driver.dialect !== 'postgres') return work();
    return withAdvisoryLock(driver.pool, `saffron:${job}`, work);
  };

  const doBatch = async (
    id: string,
    event: BatchEvent | undefined,
    by: CommandActor,
    skipLocked: boolean,
  ) => {
    const step = await stepBatch(ctx.store, id, event, {
      now: ctx.now(),
      actor: by,
      origin: nodeId,
      skipLocked,
    });
    if (step) ctx.commandEvents.wake(step.woken);
    return step;
  };

  const doBroadcast = async (
    id: string,
    event: BroadcastEvent | undefined,
    by: CommandActor,
    skipLocked: boolean,
  ) => {
    const sockets = ctx.commandEvents.local();
    const step = await stepBroadcast(ctx.store, id, event, {
      now: ctx.now(),
      actor: by,
      origin: nodeId,
      skipLocked,
      ...(sockets ? { sockets } : {}),
    });
    if (step) {
      if (sockets) for (const command of step.delivered) sockets.pushDelivered(command);
      ctx.commandEvents.wake(step.woken);
    }
    return step;
  };

  const drain = (): Promise<void> =>
    (draining ??= (async () => {
      // one step at a time; acks arriving meanwhile coalesce into the next round
      while (dirty.batch.size + dirty.broadcast.size > 0) {
        const batches = [...dirty.batch];
        const broadcasts = [...dirty.broadcast];
        dirty.batch.clear();
        dirty.broadcast.clear();
        for (const id of batches)
          await doBatch(id, undefined, actor, false).catch((error: unknown) =>
            log.error({ err: error, batch_id: id }, 'stepping a batch failed'),
          );
        for (const id of broadcasts)
          await doBroadcast(id, undefined, actor, false).catch((error: unknown) =>
            log.error({ err: error, broadcast_id: id }, 'stepping a broadcast failed'),
          );
      }
    })().finally(() => (draining = undefined)));

  const poke = (kind: 'batch' | 'broadcast', id: string) => {
    if (closed) return;
    dirty[kind].add(id);
    void track(drain());
  };

  const runTick = async (): Promise<FleetTickReport> => {
    const batches = await leader('fleet-batches', async () => {
      let n = 0;
      for (const id of await listActiveBatchIds(ctx.store)) {
        try {
          if (await doBatch(id, batchEvents.start(), actor, true)) n++;
        } catch (error) {
          log.error({ err: error, batch_id: id }, 'stepping a batch failed');
        }
      }
      return n;
    });
    const broadcasts = await leader('fleet-broadcasts', async () => {
      let n = 0;
      for (const id of await listActiveBroadcastIds(ctx.store)) {
        try {
          if (await doBroadcast(id, bcEvents.start(ctx.now(), 0), actor, true)) n++;
        } catch (error) {
          log.error({ err: error, broadcast_id: id }, 'stepping a broadcast failed');
        }
      }
      return n;
    });
    const schedules = await leader('command-schedules', () =>
      fireDueSchedules(ctx, {
        now: ctx.now(),
        startBatch: (id, by) => doBatch(id, batchEvents.start(), by, false),
        startBroadcast: (id, by) => doBroadcast(id, bcEvents.start(ctx.now(), 0), by, false),
      }),
    );
    await drain();
    return { batches, broadcasts, schedules };
  };

  // one pass at a time per process; a call during one waits for it
  const ticks = createBackgroundLoop({
    intervalMs: options.tickIntervalMs ?? 1000,
    pass: runTick,
    onError: (error) => log.error({ err: error }, 'fleet driver work failed'),
  });
  const tick = () => ticks.runNow();

  return {
    nodeId,
    actor,
    stepBatch: (id, event, by = actor) => doBatch(id, event, by, false),
    stepBroadcast: (id, event, by = actor) => doBroadcast(id, event, by, false),
    poke,
    tick,
    settle: async () => {
      while (draining) await draining;
    },
    start() {
      stopListening = ctx.commandEvents.onAcked((command) => {
        if (command.batchId) poke('batch', command.batchId);
        if (command.broadcastId) poke('broadcast', command.broadcastId);
      });
      ticks.start();
    },
    async close() {
      closed = true;
      stopListening?.();
      await ticks.stop();
      await Promise.all(background);
    },
  };
}
