import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBatchQueue } from '../../actors/index.js';

/** A queue that records its batches; each write settles when the test says so. */
function recording(options: { maxBatch: number; maxInFlight: number; gatherMs?: number }) {
  const batches: string[][] = [];
  const finish: (() => void)[] = [];
  const queue = createBatchQueue<string>({
    ...options,
    write: (batch) => {
      batches.push(batch);
      return new Promise<void>((resolve) => finish.push(resolve));
    },
  });
  return { queue, batches, finish };
}

describe('batch queue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes a lone item on the next turn, and items that arrive later in their own batch', () => {
    const { queue, batches } = recording({ maxBatch: 10, maxInFlight: 2 });
    queue.push('a');
    vi.advanceTimersByTime(1);
    queue.push('b');
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([['a'], ['b']]);
  });

  it('with gatherMs, holds an item that finds the queue idle for company', () => {
    const { queue, batches } = recording({ maxBatch: 10, maxInFlight: 1, gatherMs: 5 });
    queue.push('a');
    vi.advanceTimersByTime(2);
    queue.push('b');
    vi.advanceTimersByTime(2);
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([['a', 'b']]);
  });

  it('with gatherMs, sends a full batch at once', () => {
    const { queue, batches } = recording({ maxBatch: 3, maxInFlight: 1, gatherMs: 60_000 });
    for (const item of ['a', 'b', 'c', 'd']) queue.push(item);
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([['a', 'b', 'c']]);
  });

  it('with gatherMs, sends what queued behind a batch in flight as soon as it is done', async () => {
    const { queue, batches, finish } = recording({ maxBatch: 10, maxInFlight: 1, gatherMs: 50 });
    queue.push('a');
    vi.advanceTimersByTime(50);
    expect(batches).toEqual([['a']]);
    queue.push('b');
    queue.push('c');
    vi.advanceTimersByTime(10);
    expect(batches).toHaveLength(1); // one in flight at most
    finish[0]?.();
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([['a'], ['b', 'c']]);
  });
});
