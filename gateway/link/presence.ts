/**
 * Presence written behind: the device sessions of one gateway report connects, disconnects
 * and signs of life here, and the sweep its stale devices; every `flushEveryMs` (250 ms by
 * default) the queued events of up to `maxDevices` devices are applied in ONE transaction
 * (gateway/fleet/deviceHost.ts: rows locked by one statement in id order, snapshots advanced in
 * JS, rows written by one statement, webhook events inserted by one). A reconnect storm of
 * 10,000 devices was 20,000 transactions on the handshake's path; now it is a few dozen off
 * it, and a handshake waits for no database write.
 *
 * Why 250 ms: the dashboard and the API read `edge_devices`, which is then behind by at most
 * one interval plus one flush — short next to a person's glance or a device's heartbeat —
 * while a storm at a few thousand connects per second fills each flush with hundreds of
 * devices. A full batch (`maxDevices`, 1,000: one JSON parameter of ~100 KB) is written at
 * once without waiting for the interval.
 *
 * Order: each device's events stay in arrival order — within a flush (applied one after the
 * other) and across flushes (one flush at a time; a failed batch goes back in front of what
 * came meanwhile). The device machine names sessions, so the late disconnect of a replaced
 * session leaves the device ONLINE in whatever batch it lands.
 *
 * Failure: a flush that fails keeps its events and is retried with back-off (the interval,
 * doubling, at most 10 s); nothing is dropped but events of deleted devices. `close` writes
 * what is left (hub.close awaits it before the store closes). A gateway that dies with events
 * unflushed leaves its devices ONLINE with a `last_seen` that stops moving, and the hub's
 * sweep on another gateway resets them after `staleAfterMs`, as it did before.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { devEvents } from '../../actors/index.js';
import { applyDeviceEventBatch, type QueuedDeviceEvent } from '../fleet/deviceHost.js';
import type { CloudStore } from '../../runtime/index.js';

/** Longest wait before a failed flush is tried again. */
const MAX_BACKOFF_MS = 10_000;
/** Attempts of the final flush on close. */
const CLOSE_ATTEMPTS = 3;

/** Tunables of {@link createPresenceWriter}. */
export interface PresenceSettings {
  /** How often queued events are written. */
  flushEveryMs: number;
  /** Devices per flush; this many queued are written at once. */
  maxDevices: number;
}

/** What the writer needs from its gateway. */
export interface PresenceDeps {
  store: CloudStore;
  /** The time events are stamped with (`last_seen`, webhook events). */
  now(): Date;
  log: Pick<FastifyBaseLogger, 'warn' | 'error'>;
  /** Where the queue-length gauge is registered, if anywhere. */
  metrics?: Registry;
}

/** One gateway's presence writer. */
export interface PresenceWriter {
  /** Session `sessionId` of `deviceId` started. */
  connected(deviceId: string, sessionId: string): void;
  /** Session `sessionId` of `deviceId` ended. */
  disconnected(deviceId: string, sessionId: string): void;
  /** Signs of life of `deviceIds` at `at` (heartbeats): `last_seen` only. */
  seen(deviceIds: Iterable<string>, at: Date): void;
  /** The sweep found `deviceId` quiet since before `before`: reset it unless it spoke since. */
  stale(deviceId: string, before: Date): void;
  /** Devices with events not yet written. */
  readonly queued: number;
  /** Write what is queued now (after a flush in flight); rejects when a write fails. */
  flush(): Promise<void>;
  /** Stop the interval and write what is left (tried a few times; then logged as lost). */
  close(): Promise<void>;
}

/** Create a presence writer over `deps.store`; its interval starts at once. */
export function createPresenceWriter(
  deps: PresenceDeps,
  settings: PresenceSettings,
): PresenceWriter {
  let queue = new Map<string, QueuedDeviceEvent[]>();
  let writing: Promise<void> | undefined;
  let failures = 0;
  let retryAt = 0;
  let closed = false;

  const writeBatch = async (): Promise<void> => {
    const batch = new Map<string, QueuedDeviceEvent[]>();
    for (const [deviceId, events] of queue) {
      if (batch.size >= settings.maxDevices) break;
      batch.set(deviceId, events);
    }
    for (const deviceId of batch.keys()) queue.delete(deviceId);
    try {
      await applyDeviceEventBatch(deps.store, batch, deps.now());
      failures = 0;
    } catch (error) {
      // back in front: what came meanwhile stays behind each device's earlier events
      for (const [deviceId, later] of queue) {
        const earlier = batch.get(deviceId);
        if (earlier) earlier.push(...later);
        else batch.set(deviceId, later);
      }
      queue = batch;
      failures++;
      retryAt = performance.now() + Math.min(settings.flushEveryMs * 2 ** failures, MAX_BACKOFF_MS);
      throw error;
    }
  };
  // one batch at a time, so a device's events are written in order
  const write = () => (writing ??= writeBatch().finally(() => (writing = undefined)));

  const tick = () => {
    if (closed || writing || queue.size === 0 || performance.now() < retryAt) return;
    write().then(
      () => {
        if (queue.size >= settings.maxDevices) tick(); // a full batch waits: write it now
      },
      (error: unknown) =>
        deps.log.warn(
          { err: error, devices: queue.size, failures },
          'device presence: flush failed; retrying',
        ),
    );
  };
  const timer = setInterval(tick, settings.flushEveryMs);
  timer.unref();

  const enqueue = (deviceId: string, event: QueuedDeviceEvent) => {
    let events = queue.get(deviceId);
    if (events === undefined) queue.set(deviceId, (events = []));
    const last = events.at(-1);
    if (event.kind === 'seen' && last?.kind === 'seen') {
      if (event.at > last.at) events[events.length - 1] = event;
    } else events.push(event);
    if (queue.size >= settings.maxDevices) tick();
  };

  if (deps.metrics)
    new Gauge({
      name: 'saffron_device_presence_queued',
      help: 'devices whose connects, disconnects or last_seen this gateway has not written yet',
      registers: [deps.metrics],
      collect() {
        this.set(queue.size);
      },
    });

  const flush = async () => {
    await writing?.catch(() => undefined);
    for (let rounds = Math.ceil(queue.size / settings.maxDevices); rounds > 0; rounds--) {
      if (queue.size === 0) return;
      await write();
    }
  };

  return {
    connected: (deviceId, sessionId) =>
      enqueue(deviceId, { kind: 'session', event: devEvents.connected(sessionId), at: deps.now() }),
    disconnected: (deviceId, sessionId) =>
      enqueue(deviceId, {
        kind: 'session',
        event: devEvents.disconnected(sessionId),
        at: deps.now(),
      }),
    seen(deviceIds, at) {
      for (const deviceId of deviceIds) enqueue(deviceId, { kind: 'seen', at });
    },
    stale: (deviceId, before) => enqueue(deviceId, { kind: 'stale', before }),
    get queued() {
      return queue.size;
    },
    flush,
    async close() {
      closed = true;
      clearInterval(timer);
      for (let attempt = 1; ; attempt++) {
        try {
          await flush();
          return;
        } catch (error) {
          if (attempt >= CLOSE_ATTEMPTS) {
            deps.log.error(
              { err: error, devices: queue.size },
              'device presence: final flush failed; the sweep resets devices left ONLINE',
            );
            return;
          }
          const pause = Math.min(settings.flushEveryMs, 1_000) * attempt;
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      }
    },
  };
}
