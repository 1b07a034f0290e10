/**
 * The replay cache of device nonces: a nonce is accepted once per device within the
 * timestamp window; entries expire with the window, so memory is bounded by the request
 * rate times the window.
 */

/** Remembers nonces for `windowMs`. */
export interface NonceCache {
  /** Record `nonce` for `deviceId`; false when it was already seen within the window. */
  remember(deviceId: string, nonce: string, nowMs: number): boolean;
  readonly size: number;
}

/** An in-process nonce cache. */
export function createNonceCache(windowMs: number): NonceCache {
  const seen = new Map<string, number>(); // key → expiry (insertion order = expiry order)
  const sweep = (nowMs: number) => {
    for (const [key, expiry] of seen) {
      if (expiry > nowMs) break;
      seen.delete(key);
    }
  };
  return {
    remember(deviceId, nonce, nowMs) {
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
