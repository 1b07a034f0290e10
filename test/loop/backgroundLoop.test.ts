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

  it('runNext() runs a pass that starts after the call, one for all the calls during a pass', async () => {
    let passes = 0;
    const release = [gate(), gate()];
    const started = [gate(), gate()];
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      pass: async () => {
        const n = passes++;
        started[n]?.open();
        await release[n]?.promise;
        return n + 1;
      },
      onError: () => undefined,
    });
    const first = loop.runNext();
    await started[0]?.promise;
    // the pass in progress may have missed what these callers want: they get the next one
    const second = loop.runNext();
    const third = loop.runNext();
    expect(third).toBe(second);
    expect(loop.runNow()).toBe(first);
    release[0]?.open();
    expect(await first).toBe(1);
    await started[1]?.promise;
    release[1]?.open();
    expect(await second).toBe(2);
    expect(passes).toBe(2);
    await loop.stop();
  });

  it('stop() waits for a pass asked for by runNext() during the pass in progress', async () => {
    const events: string[] = [];
    const release = gate();
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      pass: async () => {
        events.push('pass');
        await release.promise;
      },
      onError: () => undefined,
    });
    void loop.runNow();
    const next = loop.runNext().then(() => events.push('next done'));
    const stopped = loop.stop().then(() => events.push('stopped'));
    release.open();
    await Promise.all([next, stopped]);
    expect(events).toEqual(['pass', 'pass', 'next done', 'stopped']);
  });

  it('counts a result the pass reports as failed as a failure, and still returns it', async () => {
    const t = manualTimers();
    const results = [{ ok: false }, { ok: false }, { ok: true }];
    const seen: boolean[] = [];
    let passes = 0;
    const loop = createBackgroundLoop({
      intervalMs: 1_000,
      backoff: { baseMs: 100, maxMs: 10_000 },
      random: () => 0,
      timers: t.timers,
      failed: (result: { ok: boolean }) => !result.ok,
      onResult: (result) => seen.push(result.ok),
      pass: () => results[passes++] ?? { ok: true },
      onError: () => expect.fail('a failing result is not an error'),
    });
    loop.start();
    expect(await loop.runNow()).toEqual({ ok: false });
    expect(loop.failures).toBe(1);
    t.fire();
    await settle();
    expect(loop.failures).toBe(2);
    t.fire();
    await settle();
    expect(loop.failures).toBe(0);
    await loop.stop();
    // the first wait is the interval from start(); then 50, 100 (half of each ceiling), then the interval
    expect(t.delays).toEqual([1_000, 50, 100, 1_000]);
    expect(seen).toEqual([false, false, true]);
  });

  it('asks a function interval at each pass and caps the back-off at what it says', async () => {
    const t = manualTimers();
    let period = 1_000;
    let fail = false;
    const loop = createBackgroundLoop({
      intervalMs: () => period,
      firstDelayMs: 0,
      backoff: { baseMs: 400, maxMs: 60_000 },
      random: () => 0.999,
      timers: t.timers,
      pass: () => {
        if (fail) throw new Error('down');
      },
      onError: () => undefined,
    });
    loop.start();
    period = 300; // a new configuration arrives
    t.fire();
    fail = true;
    t.fire();
    t.fire();
    await settle();
    await loop.stop();
    expect(t.delays).toEqual([1_000, 300, 300, 300]);
  });

  it('takes the wait after a failure from delayAfterFailure, beyond the interval', async () => {
    const t = manualTimers();
    const counts: number[] = [];
    const loop = createBackgroundLoop({
      intervalMs: 1_000,
      firstDelayMs: 0,
      backoff: { baseMs: 100, maxMs: 100 }, // not used: delayAfterFailure decides
      timers: t.timers,
      delayAfterFailure: (failures) => {
        counts.push(failures);
        return 5_000 * failures;
      },
      pass: () => {
        throw new Error('down');
      },
      onError: () => undefined,
    });
    loop.start();
    t.fire();
    await settle();
    await loop.stop();
    expect(counts).toEqual([1, 2]);
    expect(t.delays).toEqual([5_000, 10_000]);
  });

  it('sets no timer for an infinite interval; runIn() schedules one, after the pass in progress', async () => {
    const t = manualTimers();
    const scheduled: number[] = [];
    const release = gate();
    let passes = 0;
    let slow = false;
    const loop = createBackgroundLoop({
      intervalMs: Infinity,
      firstDelayMs: Infinity,
      timers: t.timers,
      onSchedule: (ms) => scheduled.push(ms),
      pass: async () => {
        passes++;
        if (slow) await release.promise;
      },
      onError: () => undefined,
    });
    loop.runIn(10); // not started: nothing
    loop.start();
    expect(t.pendingCount()).toBe(0);
    loop.runIn(250);
    loop.runIn(40); // moves the pass planned
    expect(t.pendingCount()).toBe(1);
    t.fire();
    await settle();
    expect(passes).toBe(1);
    expect(t.pendingCount()).toBe(0); // no interval: nothing more
    slow = true;
    const during = loop.runNow();
    loop.runIn(70); // during a pass: 70 ms after its end
    expect(t.pendingCount()).toBe(0);
    release.open();
    await during;
    await settle();
    expect(t.pendingCount()).toBe(1);
    await loop.stop();
    expect(scheduled).toEqual([250, 40, 70]);
    expect(t.pendingCount()).toBe(0);
  });

  it('resetFailures() starts the back-off again from its base', async () => {
    const t = manualTimers();
    const loop = createBackgroundLoop({
      intervalMs: 60_000,
      firstDelayMs: 0,
      backoff: { baseMs: 100, maxMs: 10_000 },
      random: () => 0,
      timers: t.timers,
      pass: () => {
        throw new Error('down');
      },
      onError: () => undefined,
    });
    loop.start();
    t.fire();
    await settle();
    expect(loop.failures).toBe(2);
    loop.resetFailures();
    expect(loop.failures).toBe(0);
    t.fire();
    await settle();
    await loop.stop();
    expect(t.delays).toEqual([50, 100, 50]);
  });

  it('tells the result once the next pass is planned', async () => {
    const t = manualTimers();
    const seen: [number, number][] = [];
    const loop = createBackgroundLoop({
      intervalMs: 500,
      firstDelayMs: 0,
      timers: t.timers,
      pass: () => Promise.resolve(7),
      onResult: (result) => seen.push([result, t.pendingCount()]),
      onError: () => undefined,
    });
    loop.start();
    await settle();
    await loop.stop();
    expect(seen).toEqual([[7, 1]]);
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
