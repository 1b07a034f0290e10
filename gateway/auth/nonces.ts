/**
 * The replay cache of device nonces: a nonce is accepted once per device within the
 * timestamp window. Two layers: an in-process map answers a replay to the same gateway
 * without a database round trip, and the `device_request_nonces` table makes the answer hold
 * across every gateway process sharing the database (a request captured on the wire cannot
 * be replayed to a second gateway). Entries expire with the window — after it the request's
 * timestamp is refused anyway — so memory and rows are bounded by request rate × window.
 */
import { purgeNonces, rememberNonce, type Store } from '../../runtime/index.js';

/** Remembers nonces for a window. */
export interface NonceCache {
  /** Record `nonce` for `deviceId`; false when it was already seen within the window. */
  remember(deviceId: string, nonce: string, nowMs: number): Promise<boolean>;
  /** Delete expired shared entries; returns how many went. */
  purge(nowMs: number): Promise<number>;
}

/** The in-process layer: a map from device and nonce to expiry, in expiry order. */
export function createLocalNonces(windowMs: number) {
  const seen = new Map<string, number>(); // key → expiry (insertion order = expiry order)
  const sweep = (nowMs: number) => {
    for (const [key, expiry] of seen) {
      if (expiry > nowMs) break;
      seen.delete(key);
    }
  };
  return {
    remember(deviceId: string, nonce: string, nowMs: number): boolean {
      sweep(nowMs);
      const key = `${deviceId}\u0000${nonce}`;
      const expiry = seen.get(key);
      if (expiry !== undefined && expiry > nowMs) return false;
      seen.delete(key);
      seen.set(key, nowMs + windowMs);
      return true;
    },
    get size() {
      return seen.size;
    },
  };
}

/** A nonce cache shared through `store` by every gateway on the same database. */
export function createNonceCache(store: Store, windowMs: number): NonceCache {
  const local = createLocalNonces(windowMs);
  return {
    async remember(deviceId, nonce, nowMs) {
      if (!local.remember(deviceId, nonce, nowMs)) return false;
      return rememberNonce(store, deviceId, nonce, new Date(nowMs), new Date(nowMs + windowMs));
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
