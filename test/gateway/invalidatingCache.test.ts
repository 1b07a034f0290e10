/**
 * The read-through cache under the gateway's credentials and document ETags: a read that
 * started before an invalidation (of its key, or of everything) never keeps its value; an
 * untrusted cache keeps nothing; size and age are bounded.
 */
import { describe, expect, it } from 'vitest';
import { createInvalidatingCache } from '../../gateway/cache/invalidatingCache.js';

/** A read held open until the test lets it finish. */
function heldRead<T>(value: T) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { read: async () => (await done, value), finish };
}

const cacheOf = (
  options: { trusted?: () => boolean; nowMs?: () => number; maxEntries?: number } = {},
) =>
  createInvalidatingCache<string>({
    maxEntries: options.maxEntries ?? 10,
    ttlMs: 1000,
    trusted: options.trusted ?? (() => true),
    ...(options.nowMs ? { nowMs: options.nowMs } : {}),
  });
const same = (v: string) => v;

describe('invalidating cache', () => {
  it('keeps what it read, until the key is invalidated', async () => {
    const cache = cacheOf();
    expect(await cache.fill('k', () => Promise.resolve('v1'), same)).toBe('v1');
    expect(cache.get('k')).toBe('v1');
    cache.invalidate('k');
    expect(cache.get('k')).toBeUndefined();
  });

  it('keeps nothing when told so', async () => {
    const cache = cacheOf();
    expect(
      await cache.fill(
        'k',
        () => Promise.resolve('v'),
        () => undefined,
      ),
    ).toBe('v');
    expect(cache.get('k')).toBeUndefined();
  });

  it('does not keep a read that an invalidation of its key overtook', async () => {
    const cache = cacheOf();
    const stale = heldRead('old');
    const filling = cache.fill('k', stale.read, same);
    cache.invalidate('k');
    // a read that starts after the invalidation is kept
    expect(await cache.fill('k', () => Promise.resolve('new'), same)).toBe('new');
    stale.finish();
    expect(await filling).toBe('old'); // its caller still gets it
    expect(cache.get('k')).toBe('new');
    // an invalidation of another key spoils nothing
    const other = heldRead('v');
    const kept = cache.fill('j', other.read, same);
    cache.invalidate('k');
    other.finish();
    await kept;
    expect(cache.get('j')).toBe('v');
  });

  it('does not keep a read that a clear overtook, nor anything while untrusted', async () => {
    let trusted = true;
    const cache = cacheOf({ trusted: () => trusted });
    const stale = heldRead('old');
    const filling = cache.fill('k', stale.read, same);
    cache.clear();
    stale.finish();
    await filling;
    expect(cache.get('k')).toBeUndefined();

    trusted = false;
    await cache.fill('k', () => Promise.resolve('v'), same);
    expect(cache.get('k')).toBeUndefined();
    // a read that started untrusted stays unkept even if trust returns before it ends
    const started = heldRead('v');
    const during = cache.fill('k', started.read, same);
    trusted = true;
    started.finish();
    await during;
    expect(cache.get('k')).toBeUndefined();
  });

  it('drops the least recently used beyond its size, and entries older than the TTL', async () => {
    let now = 0;
    const cache = cacheOf({ maxEntries: 2, nowMs: () => now });
    for (const key of ['a', 'b']) await cache.fill(key, () => Promise.resolve(key), same);
    expect(cache.get('a')).toBe('a'); // b is now the least recently used
    await cache.fill('c', () => Promise.resolve('c'), same);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('a');
    now = 999;
    expect(cache.get('c')).toBe('c');
    now = 1000;
    expect(cache.get('c')).toBeUndefined();
  });

  it('keeps an entry hit among its newer half for at least half its size of later entries', async () => {
    const cache = cacheOf({ maxEntries: 4 });
    const fill = (key: string) => cache.fill(key, () => Promise.resolve(key), same);
    for (const key of ['a', 'b', 'c', 'd']) await fill(key);
    expect(cache.get('c')).toBe('c'); // among the newer half: it keeps its place
    await fill('e'); // a goes
    await fill('f'); // b goes
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toBe('c'); // two (half of 4) later entries on, still kept
    expect(cache.size).toBe(4);
  });

  it("counts an entry's age from the start of the read that filled it", async () => {
    let now = 0;
    const cache = cacheOf({ nowMs: () => now });
    const slow = heldRead('v');
    const filling = cache.fill('k', slow.read, same);
    now = 600;
    slow.finish();
    await filling;
    now = 999;
    expect(cache.get('k')).toBe('v');
    now = 1000; // the TTL after the read began, not after it ended
    expect(cache.get('k')).toBeUndefined();
  });
});
