/**
 * The replay cache of device nonces: a nonce is accepted once per device within the
 * timestamp window (entries expire with it — after it the request's timestamp is refused
 * anyway). Two layers: an in-process map that answers a replay to the same gateway without
 * a database round trip, and the shared `device_request_nonces` table that makes the
 * answer hold across every gateway on the database.
 *
 * A `strict` nonce (a request that changes state) is inserted into the table before the
 * request is answered; the unique key refuses a nonce any gateway recorded before. A
 * `window` nonce (a read) is answered from memory and written behind: one multi-row insert
 * per `flushMs` or `maxBatch` nonces, whose transaction also announces the nonces to every
 * other gateway (NOTIFY), which then refuses them from memory. A gateway loads the
 * unexpired nonces when it starts and after its notification connection comes back, and
 * checks reads strictly until then, so an announcement it missed cannot open a gap.
 *
 * A notification connection can also lag or die silently. PostgreSQL delivers
 * notifications in commit order, so a gateway that hears its own announcement back has
 * heard every one committed before it; each gateway therefore announces at least every
 * quarter of `livenessMs` (an empty batch when idle) and answers reads from memory only
 * while it has heard back one it sent within the last `livenessMs` — else strictly. So a
 * read answered at t is refused everywhere from t + flushMs + livenessMs (+ the batch's
 * statement) on, whatever the connections do; normally from t + flushMs + a few ms. On
 * PGlite (one process, no notifications to another gateway) every nonce is strict.
 */
import { randomUUID } from 'node:crypto';
import { type ChannelListener, type CloudStore } from '../../runtime/index.js';
import { listNonces } from './store/nonces/listNonces.js';
import { listenForNonces, notifyNonces } from './store/nonces/nonceNotifications.js';
import { purgeNonces } from './store/nonces/purgeNonces.js';
import { rememberNonce } from './store/nonces/rememberNonce.js';
import { rememberNonces, type UsedNonce } from './store/nonces/rememberNonces.js';

/** How a nonce is checked: before answering, or from memory and written behind. */
export type NonceCheck = 'strict' | 'window';

/** Remembers nonces for a window. */
export interface NonceCache {
  /**
   * Record `nonce` for `deviceId`; false when it was already seen within the window.
   * `strict` answers once the shared table has the nonce; `window` answers at once.
   */
  remember(
    deviceId: string,
    nonce: string,
    nowMs: number,
    check: NonceCheck,
  ): boolean | Promise<boolean>;
  /**
   * Whether this gateway would refuse `nonce` from memory: it accepted it, or learnt that
   * another gateway did. Changes nothing.
   */
  knows(deviceId: string, nonce: string, nowMs: number): boolean;
  /**
   * Whether reads are answered from memory now: this gateway has loaded the shared nonces
   * and hears its own announcements back in time. Otherwise they are checked strictly.
   */
  readsFromMemory(): boolean;
  /** Listen for other gateways' nonces and load the unexpired ones (PostgreSQL). */
  start(): Promise<void>;
  /** Write the nonces waiting to be written behind now. */
  flush(): Promise<void>;
  /** Stop listening and write what is waiting. */
  close(): Promise<void>;
  /** Delete expired shared entries; returns how many went. */
  purge(nowMs: number): Promise<number>;
}

/** Options of {@link createNonceCache}. */
export interface NonceCacheOptions {
  /** How long a nonce is remembered (twice the timestamp skew). */
  windowMs: number;
  /**
   * Longest wait of a read's nonce before it is written and announced (100 ms); a full
   * batch or an idle gateway's sign of life writes it sooner.
   */
  flushMs?: number;
  /** Nonces written at once; a full batch is written without waiting (500). */
  maxBatch?: number;
  /**
   * Reads are answered from memory only while an announcement this gateway sent within
   * this long has come back to it (2000 ms); idle, it announces an empty batch every quarter.
   */
  livenessMs?: number;
  /** Where other gateways' announcements arrive (PostgreSQL); without it every nonce is strict. */
  listener?: ChannelListener;
  /** The current time (for batch writes). */
  now?: () => number;
  /** A batch could not be written (it is retried with the next one). */
  onError?(error: unknown): void;
  /**
   * A nonce this gateway accepted from memory that another gateway had recorded first: a
   * read replayed across gateways inside the write-behind window, or a race between them.
   */
  onLateReplay?(nonce: UsedNonce): void;
}

/** The in-process layer: a map from device and nonce to expiry, roughly in expiry order. */
export function createLocalNonces(windowMs: number) {
  const seen = new Map<string, number>(); // key → expiry (insertion order ≈ expiry order)
  const sweep = (nowMs: number) => {
    for (const [key, expiry] of seen) {
      if (expiry > nowMs) break;
      seen.delete(key);
    }
  };
  const keyOf = (deviceId: string, nonce: string) => `${deviceId}\u0000${nonce}`;
  return {
    remember(deviceId: string, nonce: string, nowMs: number): boolean {
      sweep(nowMs);
      const key = keyOf(deviceId, nonce);
      const expiry = seen.get(key);
      if (expiry !== undefined && expiry > nowMs) return false;
      seen.delete(key);
      seen.set(key, nowMs + windowMs);
      return true;
    },
    /** Whether `nonce` is seen and not expired at `nowMs`. */
    has(deviceId: string, nonce: string, nowMs: number): boolean {
      return (seen.get(keyOf(deviceId, nonce)) ?? 0) > nowMs;
    },
    /** Mark a nonce another gateway accepted as seen until `expiryMs`. */
    add(deviceId: string, nonce: string, expiryMs: number): void {
      const key = keyOf(deviceId, nonce);
      if ((seen.get(key) ?? 0) < expiryMs) {
        seen.delete(key);
        seen.set(key, expiryMs);
      }
    },
    get size() {
      return seen.size;
    },
  };
}

/** A nonce cache shared through `store` by every gateway on the same database. */
export function createNonceCache(store: CloudStore, options: NonceCacheOptions): NonceCache {
  const { windowMs, flushMs = 100, maxBatch = 500, livenessMs = 2_000 } = options;
  const now = options.now ?? Date.now;
  const origin = randomUUID();
  const local = createLocalNonces(windowMs);
  // reads may be answered from memory only while this gateway hears every announcement
  let announced = false;
  let unlisten: (() => Promise<void>) | undefined;
  let queue: UsedNonce[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let heartbeat: NodeJS.Timeout | undefined;
  // own announcements: sequence → when sent (monotonic ms); the latest heard back
  let sequence = 0;
  const sent = new Map<number, number>();
  let sentAt = -Infinity;
  let heardAt = -Infinity;
  const clock = () => performance.now();
  const hearing = () => announced && clock() - heardAt <= livenessMs;
  const heard = (seq: number) => {
    for (const [s, at] of sent) {
      if (s > seq) break;
      heardAt = Math.max(heardAt, at);
      sent.delete(s);
    }
  };

  /** Write the queue; with `announce`, send an announcement even when it is empty. */
  const write = async (announce: boolean) => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0 && !announce) return;
    const at = now();
    const seq = ++sequence;
    // taken before the statement: hearing it back means all committed before this moment arrived
    if (options.listener) sent.set(seq, (sentAt = clock()));
    try {
      const taken = await store.transaction(async (tx) => {
        const recorded = await rememberNonces(tx, batch, new Date(at));
        if (options.listener) await notifyNonces(tx, batch, origin, seq);
        return recorded;
      });
      for (const nonce of taken) options.onLateReplay?.(nonce);
    } catch (error) {
      sent.delete(seq);
      options.onError?.(error);
      queue = [...batch.filter((n) => n.expiresAt.getTime() > at), ...queue];
      schedule();
    }
  };
  const flush = (announce = false) => (writing = writing.then(() => write(announce)));
  const schedule = () => {
    if (queue.length >= maxBatch) void flush();
    else if (timer === undefined && queue.length > 0) {
      timer = setTimeout(() => void flush(), flushMs);
      timer.unref();
    }
  };

  const load = async () => {
    for (const n of await listNonces(store, new Date(now())))
      local.add(n.deviceId, n.nonce, n.expiresAt.getTime());
    announced = true;
  };

  return {
    remember(deviceId, nonce, nowMs, check) {
      if (!local.remember(deviceId, nonce, nowMs)) return false;
      const expiresAt = new Date(nowMs + windowMs);
      if (check === 'strict' || !hearing())
        return rememberNonce(store, deviceId, nonce, new Date(nowMs), expiresAt);
      queue.push({ deviceId, nonce, expiresAt });
      schedule();
      return true;
    },
    knows: (deviceId, nonce, nowMs) => local.has(deviceId, nonce, nowMs),
    readsFromMemory: hearing,
    async start() {
      if (!options.listener || unlisten) return;
      unlisten = await listenForNonces(options.listener, {
        onNonces(from, seq, nonces) {
          if (from === origin) return heard(seq);
          for (const n of nonces) local.add(n.deviceId, n.nonce, n.expiresAt.getTime());
        },
        onReconnect() {
          // announcements were lost while the connection was down: strict until reloaded
          announced = false;
          load().catch((error: unknown) => options.onError?.(error));
        },
      });
      await load();
      await flush(true);
      heartbeat = setInterval(() => {
        if (clock() - sentAt >= livenessMs / 4) void flush(true);
      }, livenessMs / 4);
      heartbeat.unref();
    },
    flush: () => flush(),
    async close() {
      announced = false;
      clearInterval(heartbeat);
      const stop = unlisten;
      unlisten = undefined;
      await stop?.();
      await flush();
    },
    async purge(nowMs) {
      let total = 0;
      for (;;) {
        const deleted = await purgeNonces(store, new Date(nowMs));
        total += deleted;
        if (deleted < 10_000) return total;
      }
    },
  };
}
