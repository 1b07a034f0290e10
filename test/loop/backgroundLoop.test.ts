import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  createBackgroundLoop,
  unrefTimers,
  type LoopTimers,
} from '../../runtime/index.js';

/** A promise settled from outside. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves when `predicate` holds, re-checked after every pass the test records. */
function waiter() {
  const waits: { predicate: () => boolean; open: () => void }[] = [];
  return {
    until(predicate: () => boolean): Promise<void> {
      if (predicate()) return Promise.resolve();
      const g = gate();
      waits.push({ predicate, open: g.open });
      return g.promise;
    },
    check() {
      for (const w of [...waits])
        if (w.predicate()) {
          waits.splice(waits.indexOf(w), 1);
          w.open();
        }
    },
  };
}

/** Timers run by hand: each request is recorded with its delay, and fired by the test. */
function manualTimers() {
  const pending = new Map<number, { callback: () => void; ms: number }>();
  const delays: number[] = [];
  let next = 0;
  const timers: LoopTimers = {
    setTimeout(callback, ms) {
      const id = next++;
      pending.set(id, { callback, ms });
      delays.push(ms);
      return id;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
  };
  return {
    timers,
    delays,
    pendingCount: () => pending.size,
    /** Fire every pending timer once. */
    fire() {
      const due = [...pending.values()];
      pending.clear();
      for (const t of due) t.callback();
    },
  };
}

/** Let pending promise reactions run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('backgroundLoop', () => {
  it('runs passes one after another until stopped, the first within start()', async () => {
    const events: string[] = [];
    const w = waiter();
    let passes = 0;
    const loop = createBackgroundLoop({
      intervalMs: 5,
      firstDelayMs: 0,
      pass: () => {
        passes++;
        events.push(`pass ${passes}`);
        w.check();
      },
      onError: (error) => events.push(`error ${String(error)}`),
    });
    loop.start();
    expect(events).toEqual(['pass 1']);
    await w.until(() => passes >= 3);
    await loop.stop();
    const after = passes;
    // several intervals go by: nothing more runs
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(passes).toBe(after);
    expect(events.filter((e) => e.startsWith('error'))).toEqual([]);
    expect(loop.started).toBe(false);
  });

  it('never runs two passes at once: runNow joins, wakes during a pass make one more', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    const gates = [gate(), gate()];
    const w = waiter();
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      pass: async () => {
        running++;
        most = Math.max(most, running);
        const mine = gates[passes++];
        w.check();
        if (mine) await mine.promise;
        running--;
        return passes;
      },
      onError: () => undefined,
    });
    const first = loop.runNow();
    const joined = loop.runNow();
    expect(joined).toBe(first);
    loop.wake();
    loop.wake();
    loop.wake();
    gates[0]?.open();
    expect(await first).toBe(1);
    await w.until(() => passes === 2);
    gates[1]?.open();
    await loop.stop();
    expect(passes).toBe(2);
    expect(most).toBe(1);
  });

  it('stop() resolves only once the pass in progress has finished', async () => {
    const events: string[] = [];
    const release = gate();
    const started = gate();
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      firstDelayMs: 0,
      pass: async () => {
        events.push('pass started');
        started.open();
        await release.promise;
        events.push('pass ended');
      },
      onError: () => undefined,
    });
    loop.start();
    await started.promise;
    const stopped = loop.stop().then(() => events.push('stopped'));
    await settle();
    events.push('released');
    release.open();
    await stopped;
    expect(events).toEqual(['pass started', 'released', 'pass ended', 'stopped']);
  });

  it('reports the errors of its own passes and goes on; runNow gives its error to the caller', async () => {
    const errors: string[] = [];
    const w = waiter();
    let passes = 0;
    const loop = createBackgroundLoop({
      intervalMs: 2,
      firstDelayMs: 0,
      pass: () => {
        passes++;
        w.check();
        if (passes <= 3) throw new Error(`pass ${passes} failed`);
        return passes;
      },
      onError: (error) => errors.push((error as Error).message),
    });
    await expect(loop.runNow()).rejects.toThrow('pass 1 failed');
    expect(errors).toEqual([]);
    expect(loop.failures).toBe(1);
    loop.start();
    await w.until(() => passes >= 4);
    await loop.stop();
    expect(errors.slice(0, 2)).toEqual(['pass 2 failed', 'pass 3 failed']);
    expect(loop.failures).toBe(0);
  });

  it('backs off with jitter on consecutive failures, capped at the interval, and resets on success', async () => {
    const t = manualTimers();
    let passes = 0;
    const outcomes = ['fail', 'fail', 'fail', 'ok', 'fail'];
    const loop = createBackgroundLoop({
      intervalMs: 1_000,
      firstDelayMs: 0,
      backoff: { baseMs: 100, maxMs: 10_000 },
      random: () => 0.5,
      timers: t.timers,
      pass: () => {
        if (outcomes[passes++] === 'fail') throw new Error('down');
      },
      onError: () => undefined,
    });
    loop.start();
    for (let i = 1; i < outcomes.length; i++) {
      await settle();
      t.fire();
    }
    await settle();
    await loop.stop();
    expect(passes).toBe(5);
    // min(max, 100·2^(n-1)), of which random() = 0.5 keeps three quarters; a success waits the
    // interval, and the next failure starts again from the base
    expect(t.delays).toEqual([75, 150, 300, 1_000, 75]);
    expect(t.pendingCount()).toBe(0);
  });

  it('schedules the next pass within the timer callback when the pass is synchronous', async () => {
    const t = manualTimers();
    const seen: number[] = [];
    const loop = createBackgroundLoop({
      intervalMs: 1_000,
      timers: t.timers,
      pass: () => {
        seen.push(seen.length + 1);
        if (seen.length === 2) loop.wake(); // during a pass: one more right after it
      },
      onError: () => undefined,
    });
    loop.start();
    t.fire();
    expect(seen).toEqual([1]);
    expect(t.pendingCount()).toBe(1);
    t.fire();
    expect(seen).toEqual([1, 2, 3]);
    expect(t.pendingCount()).toBe(1);
    await loop.stop();
    expect(t.pendingCount()).toBe(0);
  });

  it('takes the wait after a pass from its result', async () => {
    const t = manualTimers();
    const left = [3, 2, 0];
    let passes = 0;
    const loop = createBackgroundLoop({
      intervalMs: 500,
      timers: t.timers,
      delayAfter: (remaining: number) => (remaining > 0 ? 0 : 500),
      pass: () => left[passes++] ?? 0,
      onError: () => undefined,
    });
    loop.start();
    expect(t.delays).toEqual([500]);
    for (let i = 0; i < 3; i++) {
      t.fire();
      await settle();
    }
    await loop.stop();
    expect(passes).toBe(3);
    expect(t.delays).toEqual([500, 0, 0, 500]);
    expect(t.pendingCount()).toBe(0);
  });

  it('runs a pass on wake() before start() and none after stop()', async () => {
    let passes = 0;
    const w = waiter();
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      pass: () => {
        passes++;
        w.check();
      },
      onError: () => undefined,
    });
    loop.wake();
    await w.until(() => passes === 1);
    await loop.stop();
    loop.wake();
    await settle();
    expect(passes).toBe(1);
  });

  it('schedules with unref’d timers by default', async () => {
    const handles: unknown[] = [];
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      timers: {
        setTimeout(callback, ms) {
          const handle = unrefTimers.setTimeout(callback, ms);
          handles.push(handle);
          return handle;
        },
        clearTimeout: unrefTimers.clearTimeout,
      },
      pass: () => undefined,
      onError: () => undefined,
    });
    loop.start();
    await loop.stop();
    expect(handles).toHaveLength(1);
    expect((handles[0] as NodeJS.Timeout).hasRef()).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('doubles from the base up to the maximum, half of it random', () => {
    const policy = { baseMs: 100, maxMs: 1_000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 0))).toEqual([
      50, 100, 200, 400, 500, 500,
    ]);
    expect([1, 2, 3].map((n) => backoffDelay(policy, n, () => 0.999999))).toEqual([100, 200, 400]);
  });
});
