/**
 * The device hub of one gateway process: the sessions it holds (one per device; a newer
 * connection replaces an older one), push routing, the periodic checks, and the command
 * sweep.
 *
 * Routing: whoever makes a command deliverable wakes the device locally and —
 * on PostgreSQL — NOTIFYs `saffron_commands` in the same transaction; every gateway LISTENs
 * and the one holding the device's socket pushes. PGlite is one process: local wake-ups
 * are all there is. After the LISTEN connection is re-established every local session is
 * woken, since notifications sent meanwhile are lost.
 *
 * The sweep (every `sweepIntervalMs`; on PostgreSQL by one gateway at a time, under an
 * advisory lock) expires commands, applies the ack timeout (retry with backoff, or FAILED
 * after `max_retries`), wakes devices whose retries came due, and resets devices left
 * ONLINE by a gateway that died (no `last_seen` for `staleAfterMs`).
 *
 * Presence — connects, disconnects, `last_seen` and those stale resets — is written behind
 * by the hub's presence writer (presence.ts), many devices per transaction; `close` writes
 * what is left after the last session has ended.
 *
 * The heartbeat check (heartbeat, silence, back-pressure, `last_seen`) visits each session
 * once per `heartbeatIntervalMs`, spread over the interval by a timer wheel (tickWheel.ts)
 * rather than all sessions in one pass.
 *
 * Devices with nothing to resume (quietDevices.ts): a session that ends with every command it
 * pushed acked leaves its device quiet, so a reconnect needs no statement (session.ts). One
 * that leaves pushed commands unacked NOTIFYs the other gateways, in groups as sessions end,
 * so that none of them takes its own entry for the device; a command created DELIVERED for
 * a session that has ended meanwhile spoils this gateway's entry. What slips past both (a
 * gateway that dies first, a device back on another gateway before the notification) is
 * retried after the ack timeout, as before.
 *
 * A socket upgraded without a nonce must answer its challenge (frames.ts) before it counts:
 * it is held apart, replaces no session of its device and gets no push, and one shared
 * timer closes those that have not proven themselves in time.
 */
import { randomUUID } from 'node:crypto';
import { Gauge, Histogram } from 'prom-client';
import type { WebSocket } from 'ws';
import { notifyCommands, withAdvisoryLock } from '../../runtime/index.js';
import {
  SYSTEM_ACTOR,
  type CommandActor,
  type CommandRecord,
} from '../commands/store/commands/command.js';
import { expireCommands } from '../commands/store/commands/expireCommands.js';
import { listNewlyDueDevices } from '../commands/store/commands/listNewlyDueDevices.js';
import { retryUnackedCommands } from '../commands/store/commands/retryUnackedCommands.js';
import { listStaleDevices } from '../devices/store/deviceStatus/listStaleDevices.js';
import type { GatewayContext } from '../context.js';
import { createCommandGroups, type CommandGroups } from './commandGroups.js';
import { createCommandSigner, type CommandSigner } from './commandSigner.js';
import { createAdmission } from './admission.js';
import { CLOSE } from './frames.js';
import { createPresenceWriter } from './presence.js';
import {
  openSession,
  type DeviceSession,
  type SessionHost,
  type SessionOptions,
} from './session.js';
import type { DeviceLinkSettings } from './settings.js';
import { createTickWheel } from './tickWheel.js';

/** What one sweep did. */
export interface SweepReport {
  expired: number;
  retried: number;
  failed: number;
  woken: number;
  stale: number;
}

/** The device hub of one gateway. */
export interface DeviceHub {
  /** This gateway's id in notifications and audit rows. */
  readonly nodeId: string;
  /** Who delivers commands, for the audit trail. */
  readonly actor: CommandActor;
  /** The group commit of this gateway's creations, deliveries and acks (sockets and REST). */
  readonly groups: CommandGroups;
  /** Signs every command this gateway delivers (sockets and polls). */
  readonly signer: CommandSigner;
  /**
   * Take a handshake slot for an upgrade request; undefined when `maxPendingHandshakes`
   * are in progress (answer 503). The release is idempotent; a slot never released (an
   * upgrade abandoned between authentication and the socket) frees itself after 30 s.
   */
  admit(): (() => void) | undefined;
  /** Seconds an upgrade refused by {@link admit} should wait (admission.ts). */
  retryAfterSeconds(): number;
  /**
   * Serve a device's socket (its upgrade authenticated already); `peer` is its TCP socket,
   * whose address the session reads when its acks need it; `release` frees its handshake
   * slot. With `challenge` the socket must prove itself before it counts.
   */
  accept(
    socket: WebSocket,
    deviceId: string,
    peer: SessionOptions['peer'],
    release?: () => void,
    challenge?: boolean,
  ): DeviceSession;
  /** Push due commands to `deviceId` if its socket is here. */
  wake(deviceId: string): void;
  /** Whether `deviceId`'s socket is here and idle: a new command may be pushed at once. */
  idle(deviceId: string): boolean;
  /** Every device whose socket is here and idle. */
  idleDevices(): string[];
  /** Push a command created DELIVERED to its device's socket, if it is still here. */
  pushDelivered(command: CommandRecord): void;
  /** Run one sweep now (also runs on its interval); undefined when another node holds the lock. */
  sweep(): Promise<SweepReport | undefined>;
  /** Start listening and the periodic work. */
  start(): Promise<void>;
  /**
   * Close every session, stop the periodic work, wait for what is in flight, and write the
   * presence still queued (the sessions' disconnects among it).
   */
  close(): Promise<void>;
}

/** Create the hub of `ctx`'s gateway. */
export function createDeviceHub(ctx: GatewayContext, settings: DeviceLinkSettings): DeviceHub {
  const nodeId = randomUUID();
  const actor: CommandActor = { actor: `gateway:${nodeId}`, role: 'system' };
  const groupSizes = new Histogram({
    name: 'saffron_command_group_size',
    help: 'commands created, acks, or devices delivered to, committed together in one group',
    labelNames: ['kind'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [ctx.metrics],
  });
  const groups = createCommandGroups(ctx.store, actor, nodeId, () => ctx.now(), {
    onGroup: (kind, size) => groupSizes.observe({ kind }, size),
  });
  const log = ctx.app.log;
  const sessions = new Map<string, DeviceSession>();
  const live = new Set<DeviceSession>(); // includes replaced sessions still closing
  const unproven = new Set<DeviceSession>(); // challenged, no valid hello yet
  const background = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T | undefined> => {
    const guarded = work.catch((error: unknown) => {
      log.error({ err: error }, 'device hub background work failed');
      return undefined;
    });
    background.add(guarded);
    void guarded.finally(() => background.delete(guarded));
    return guarded;
  };
  let timers: NodeJS.Timeout[] = [];
  let sweeping: Promise<SweepReport | undefined> | undefined;
  let closing = false;
  let dueSince = new Date(ctx.now().getTime() - settings.retryMaxMs);
  const presence = createPresenceWriter(
    { store: ctx.store, now: () => ctx.now(), log, metrics: ctx.metrics },
    { flushEveryMs: settings.presenceFlushMs, maxDevices: settings.presenceBatch },
  );

  new Gauge({
    name: 'saffron_device_sessions',
    help: 'device WebSocket sessions held by this gateway',
    registers: [ctx.metrics],
    collect() {
      this.set(sessions.size);
    },
  });

  const wake = (deviceId: string) => {
    ctx.quietDevices.touched(deviceId); // a device between its upgrade and its hello
    sessions.get(deviceId)?.wake();
  };
  const idle = (deviceId: string) => sessions.get(deviceId)?.idle() ?? false;
  const idleDevices = () => {
    const found: string[] = [];
    for (const [deviceId, session] of sessions) if (session.idle()) found.push(deviceId);
    return found;
  };
  const pushDelivered = (command: CommandRecord) => {
    const session = sessions.get(command.deviceId);
    if (session) session.pushDelivered(command);
    else ctx.quietDevices.touched(command.deviceId); // its session ended meanwhile
  };

  // devices whose ended sessions left pushed commands unacked, told to the other gateways
  let leftBehind: string[] = [];
  let telling = false;
  const tellLeftBehind = async () => {
    try {
      while (leftBehind.length > 0) {
        const deviceIds = leftBehind;
        leftBehind = [];
        try {
          await ctx.store.transaction((tx) => notifyCommands(tx, deviceIds, nodeId));
        } catch (error) {
          // they are retried after the ack timeout all the same
          log.warn(
            { err: error, devices: deviceIds.length },
            'could not tell the other gateways of unacked commands',
          );
        }
      }
    } finally {
      telling = false;
    }
  };
  const leftUnacked = (deviceId: string) => {
    if (ctx.store.driver.dialect !== 'postgres') return; // one process: no other gateway
    leftBehind.push(deviceId);
    if (telling) return;
    telling = true;
    void track(tellLeftBehind());
  };

  const admission = createAdmission({
    limit: settings.maxPendingHandshakes,
    now: () => ctx.now().getTime(),
  });
  new Gauge({
    name: 'saffron_device_handshakes_pending',
    help: 'device socket handshakes in progress on this gateway (upgrade until connection recorded)',
    registers: [ctx.metrics],
    collect() {
      this.set(admission.pending);
    },
  });

  // each session's heartbeat check once per interval, a slot of the sessions at a time
  const heartbeats = createTickWheel<DeviceSession>(settings.heartbeatIntervalMs, (members) => {
    const now = ctx.now();
    const due: string[] = [];
    for (const session of members) if (session.tick(now.getTime())) due.push(session.deviceId);
    if (due.length > 0) presence.seen(due, now);
  });

  // the heartbeat tick is too coarse for the proof deadline; this one walks only the unproven
  const proofTick = () => {
    const now = ctx.now().getTime();
    for (const session of unproven) session.tick(now);
  };

  const runSweep = async (): Promise<SweepReport | undefined> => {
    const now = ctx.now();
    const work = async (): Promise<SweepReport> => {
      const expired = await expireCommands(ctx.store, SYSTEM_ACTOR, now);
      const changed = await retryUnackedCommands(
        ctx.store,
        {
          deliveredBefore: new Date(now.getTime() - settings.ackTimeoutMs),
          backoff: { baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs },
          actor: SYSTEM_ACTOR,
        },
        now,
      );
      const due = await listNewlyDueDevices(ctx.store, dueSince, now);
      dueSince = now;
      if (due.length > 0) {
        await ctx.store.transaction((tx) => notifyCommands(tx, due, nodeId));
        due.forEach(wake);
      }
      let stale = 0;
      const before = new Date(now.getTime() - settings.staleAfterMs);
      const quiet = await listStaleDevices(ctx.store, before);
      for (const deviceId of quiet) {
        if (sessions.has(deviceId)) continue; // alive here
        presence.stale(deviceId, before); // reset unless it reconnected meanwhile
        stale++;
      }
      const retried = changed.filter((c) => c.status === 'PENDING').length;
      return {
        expired: expired.length,
        retried,
        failed: changed.length - retried,
        woken: due.length,
        stale,
      };
    };
    const driver = ctx.store.driver;
    if (driver.dialect !== 'postgres') return work();
    return withAdvisoryLock(driver.pool, 'saffron:commands', work);
  };

  const sweep = () => {
    // one sweep at a time per process; a call during one waits for it
    sweeping ??= runSweep().finally(() => (sweeping = undefined));
    return sweeping;
  };

  // what every session shares: one object, no closures per session
  const signer = createCommandSigner(ctx.keys);
  let stopForgetting = () => {};
  const host: SessionHost = {
    ctx,
    settings,
    presence,
    groups,
    signer,
    onProven(proven) {
      const deviceId = proven.deviceId;
      unproven.delete(proven);
      const previous = sessions.get(deviceId);
      sessions.set(deviceId, proven);
      const replaced = 'replaced by a newer connection of this device';
      if (previous !== proven) previous?.close(CLOSE.replaced, replaced);
      // an older socket of the device still waiting to prove itself is obsolete too
      for (const other of unproven)
        if (other.deviceId === deviceId) other.close(CLOSE.replaced, replaced);
    },
    onEnd(ended) {
      unproven.delete(ended);
      if (sessions.get(ended.deviceId) === ended) sessions.delete(ended.deviceId);
    },
    onSettled(settled) {
      live.delete(settled);
      heartbeats.delete(settled);
    },
    leftUnacked,
  };

  return {
    nodeId,
    actor,
    groups,
    signer,
    admit: () => admission.admit(),
    retryAfterSeconds: () => admission.retryAfterSeconds(),
    accept(socket, deviceId, peer, release, challenge = false) {
      const session = openSession(socket, deviceId, host, {
        peer,
        challenge,
        ...(release ? { onConnected: release } : {}),
      });
      live.add(session);
      heartbeats.add(session);
      if (!session.proven()) unproven.add(session);
      if (closing) session.close(CLOSE.shutdown, 'server shutting down');
      return session;
    },
    wake,
    idle,
    idleDevices,
    pushDelivered,
    sweep,
    start() {
      // an acked command is not pushed again: its kept signature goes (commandSigner.ts)
      stopForgetting = ctx.commandEvents.onAcked((command) => signer.forget(command.commandId));
      // the gateway's one LISTEN connection carries the command channel (cache/changeBus.ts)
      ctx.changes.onCommands({
        notify: ({ origin, deviceIds }) => {
          if (origin !== nodeId) deviceIds.forEach(wake);
          else deviceIds.forEach((id) => ctx.quietDevices.touched(id));
        },
        reconnected: () => {
          ctx.quietDevices.forget();
          sessions.forEach((s) => s.wake());
        },
      });
      heartbeats.start();
      timers = [
        setInterval(() => void track(sweep()), settings.sweepIntervalMs),
        setInterval(proofTick, Math.max(10, settings.proofTimeoutMs / 4)),
      ];
      for (const timer of timers) timer.unref();
      return Promise.resolve();
    },
    async close() {
      closing = true;
      stopForgetting();
      heartbeats.stop();
      timers.forEach(clearInterval);
      for (const session of live) session.close(CLOSE.shutdown, 'server shutting down');
      // a device that does not answer the close handshake promptly is cut off
      const deadline = setTimeout(() => live.forEach((s) => s.terminate()), 1000);
      await Promise.all([...live].map((s) => s.ended));
      clearTimeout(deadline);
      await sweeping;
      await Promise.all(background);
      await presence.close(); // the disconnects of the sessions just closed, and the rest
    },
  };
}
