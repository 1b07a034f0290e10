/**
 * A bounded read-through cache that change notifications empty: least recently used entries
 * go first beyond `maxEntries`, and every entry expires after `ttlMs` (a backstop should a
 * notification never arrive).
 *
 * Recency is kept nearly, not exactly: a hit moves its entry to the young end of the order
 * only when the entry sits in the older half of it (half of `maxEntries` or more entries were
 * placed after it, new ones and moved ones). Each use therefore keeps an entry through at
 * least half the capacity's worth of later placements, and the hits on a hot entry — one
 * token, one command type's rules — leave the map as it is: moving an entry deletes and
 * re-adds it, and a long-lived `Map` that does so at every request keeps reallocating its
 * table in the old generation.
 *
 * The race it closes: a read that started before an invalidation may return the old value
 * after it. Each read in flight is registered under its key; invalidating the key (or
 * clearing) marks the read stale, and a stale read's value is returned to its caller but
 * never kept. While `trusted()` is false (the gateway is not hearing notifications, or
 * cannot vouch that it hears them in time) nothing is kept or served, so every request reads
 * through.
 */

/** How large and how old a gateway's caches may grow (defaults: 100,000 entries, 10 min). */
export interface CacheBounds {
  /** Most entries kept (least recently used go first). */
  maxEntries?: number;
  /** Longest an entry is used, counted from the start of the read that filled it. */
  ttlMs?: number;
}

/** The bounds a gateway's caches have unless told otherwise. */
export const CACHE_DEFAULTS: Required<CacheBounds> = { maxEntries: 100_000, ttlMs: 600_000 };

/** Options of {@link createInvalidatingCache}. */
export interface InvalidatingCacheOptions extends Required<CacheBounds> {
  /** Whether values may be kept and served now (false while invalidations may be missed). */
  trusted: () => boolean;
  /** A monotonic clock in ms (default `performance.now`). */
  nowMs?: () => number;
}

/** A cache of `V` by string key. */
export interface InvalidatingCache<V> {
  /** The value kept for `key`, if any, not expired, and the cache trusted now. */
  get(key: string): V | undefined;
  /**
   * Run `read` and keep `keep(result)` under `key` (nothing when it is undefined), unless
   * `key` was invalidated (or the cache cleared, or untrusted) while it ran; returns
   * `read`'s result either way.
   */
  fill<R>(key: string, read: () => Promise<R>, keep: (result: R) => V | undefined): Promise<R>;
  /** Drop `key` and spoil the reads of it in flight. */
  invalidate(key: string): void;
  /** Drop everything and spoil every read in flight. */
  clear(): void;
  /** Entries kept (expired ones included until touched). */
  readonly size: number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
  /** Where it was last put in the order (the count of entries kept before it). */
  placed: number;
}

interface Read {
  stale: boolean;
}

/** An empty cache. */
export function createInvalidatingCache<V>(
  options: InvalidatingCacheOptions,
): InvalidatingCache<V> {
  const nowMs = options.nowMs ?? (() => performance.now());
  const entries = new Map<string, Entry<V>>(); // insertion order ≈ least recently used first
  const reads = new Map<string, Set<Read>>();
  const half = Math.max(1, Math.floor(options.maxEntries / 2));
  let placed = 0; // placements so far: entries kept, and moves

  const spoil = (set: Set<Read> | undefined) => set?.forEach((read) => (read.stale = true));

  return {
    get(key) {
      if (!options.trusted()) return undefined;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= nowMs()) {
        entries.delete(key);
        return undefined;
      }
      if (placed - entry.placed >= half) {
        // in the older half: most recently used now
        entries.delete(key);
        entry.placed = ++placed;
        entries.set(key, entry);
      }
      return entry.value;
    },
    async fill(key, read, keep) {
      const mine: Read = { stale: !options.trusted() };
      let set = reads.get(key);
      if (!set) reads.set(key, (set = new Set()));
      set.add(mine);
      // the age counts from before the read: a value is never used longer than `ttlMs` after
      // the moment the database could last have shown it
      const startedAt = nowMs();
      try {
        const result = await read();
        if (!mine.stale && options.trusted()) {
          const value = keep(result);
          entries.delete(key);
          if (value !== undefined)
            entries.set(key, { value, expiresAt: startedAt + options.ttlMs, placed: ++placed });
          for (const oldest of entries.keys()) {
            if (entries.size <= options.maxEntries) break;
            entries.delete(oldest);
          }
        }
        return result;
      } finally {
        set.delete(mine);
        if (set.size === 0 && reads.get(key) === set) reads.delete(key);
      }
    },
    invalidate(key) {
      entries.delete(key);
      spoil(reads.get(key));
    },
    clear() {
      entries.clear();
      reads.forEach(spoil);
    },
    get size() {
      return entries.size;
    },
  };
}
