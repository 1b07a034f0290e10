/**
 * Handshake admission (gateway/link/admission.ts) on a simulated clock: slots up to the
 * limit, and a `Retry-After` that fills each coming second only up to the rate at which the
 * gateway completed handshakes while it was full, and never below half the best second seen —
 * so a storm is told to come back as fast as it can be served, not all at once and not later
 * than needed.
 */
import { describe, expect, it } from 'vitest';
import {
  type Admission,
  createAdmission,
  MAX_RETRY_AFTER_S,
} from '../../gateway/link/admission.js';

function clock(startMs = 1_000_000) {
  let t = startMs;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** How many of `refusals` are told each number of seconds. */
function spread(retryAfter: () => number, refusals: number): Map<number, number> {
  const told = new Map<number, number>();
  for (let i = 0; i < refusals; i++) {
    const s = retryAfter();
    told.set(s, (told.get(s) ?? 0) + 1);
  }
  return told;
}

/**
 * `seconds` seconds of a full gateway (`limit` 10) that completes `perSecond` handshakes a
 * second, each freed slot taken at once and one upgrade refused per completion.
 */
function fullSeconds(
  admission: Admission,
  c: ReturnType<typeof clock>,
  seconds: number,
  perSecond: number,
) {
  const held: (() => void)[] = [];
  for (let s = 0; s < seconds; s++) {
    for (let i = 0; i < perSecond; i++) {
      while (held.length < 10) held.push(admission.admit()!);
      expect(admission.admit()).toBeUndefined();
      held.shift()!();
    }
    c.advance(1000);
  }
}

describe('handshake admission', () => {
  it('holds at most the limit, frees a slot once, and frees an abandoned one by itself', () => {
    const c = clock();
    const admission = createAdmission({ limit: 2, now: c.now, abandonAfterMs: 50 });
    const first = admission.admit();
    const second = admission.admit();
    expect(first && second).toBeTruthy();
    expect(admission.admit()).toBeUndefined();
    first!();
    first!();
    expect(admission.pending).toBe(1);
    expect(admission.admit()).toBeTruthy();
    expect(admission.admit()).toBeUndefined();
  });

  it('tells a storm to come back at the rate handshakes completed while the gateway was full', () => {
    const c = clock();
    const admission = createAdmission({ limit: 10, now: c.now });
    // a full gateway completing 40 handshakes a second, refusing others, for 4 seconds
    fullSeconds(admission, c, 4, 40);
    // the estimate has moved from the limit per second (10) toward the 40 measured
    const told = spread(() => admission.retryAfterSeconds(), 200);
    const perSecond = told.get(1)!;
    expect(perSecond).toBeGreaterThan(30);
    expect(perSecond).toBeLessThanOrEqual(40);
    // each coming second filled in turn, none beyond what it can take
    const seconds = [...told.keys()].sort((a, b) => a - b);
    expect(seconds[0]).toBe(1);
    for (const s of seconds.slice(0, -1)) expect(told.get(s)).toBe(perSecond);
    expect(seconds.at(-1)).toBe(Math.ceil(200 / perSecond));
  });

  it('keeps the estimate at half the best second it has seen, so a few slow seconds do not spread a storm over a minute', () => {
    const c = clock();
    const admission = createAdmission({ limit: 10, now: c.now });
    // a second in which 400 handshakes completed without the gateway ever being full
    for (let i = 0; i < 400; i++) admission.admit()!();
    c.advance(1000);
    // then six full seconds in which only 20 completed each (the old sessions' closes, a
    // collection, clients slow to answer their challenge)
    fullSeconds(admission, c, 6, 20);
    // the estimate stays at 200 a second, not the 26 the slow seconds alone would give
    const told = spread(() => admission.retryAfterSeconds(), 1000);
    expect(told.get(1)).toBe(200);
    expect(Math.max(...told.keys())).toBe(5);
  });

  it('does not take a quiet second for the capacity, and caps the wait', () => {
    const c = clock();
    const admission = createAdmission({ limit: 5, now: c.now });
    // a quiet minute: one handshake a second, never full
    for (let s = 0; s < 60; s++) {
      admission.admit()!();
      c.advance(1000);
    }
    // the first refusals of a storm are spread at the limit per second, not at 1/s
    expect(spread(() => admission.retryAfterSeconds(), 10)).toEqual(
      new Map([
        [1, 5],
        [2, 5],
      ]),
    );
    // past what the next minute can take, the wait is capped
    const far = spread(() => admission.retryAfterSeconds(), 1000);
    expect(Math.max(...far.keys())).toBe(MAX_RETRY_AFTER_S);
  });
});
