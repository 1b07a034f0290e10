/** UUIDv7 workflow ids: well-formed, in the order they were made, unique. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { timeOrderedIds } from '../../runtime/index.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sorted = (ids: string[]) => [...ids].sort();
/** The Unix ms an id carries. */
const msOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('timeOrderedIds', () => {
  it('makes version 7, RFC 9562 variant ids carrying the clock, which zod accepts as UUIDs', () => {
    const at = Date.UTC(2026, 10, 27, 21, 30, 0, 123);
    const id = timeOrderedIds(() => at).uuid();
    expect(id).toMatch(V7);
    expect(msOf(id)).toBe(at);
    expect(z.uuid().safeParse(id).success).toBe(true);
  });

  it('keeps ids of the same millisecond, of later ones and after the clock went back in order', () => {
    let t = 1_800_000_000_000;
    const clock = [t, t, t, t + 1, t + 1, t - 5_000, t - 5_000, t + 2, t + 2];
    let i = 0;
    const ids = timeOrderedIds(() => clock[i++]!);
    const made = clock.map(() => ids.uuid());
    expect(made).toEqual(sorted(made));
    expect(new Set(made).size).toBe(made.length);
    // the clock went back: the ids keep the last time rather than go back with it
    expect(msOf(made[5]!)).toBe(t + 1);
    t += 2;
    expect(msOf(made[8]!)).toBe(t);
  });

  it('moves on to the next millisecond when the counter runs out, still in order', () => {
    const t = 1_800_000_000_000;
    const ids = timeOrderedIds(() => t);
    const made = Array.from({ length: 10_000 }, () => ids.uuid());
    expect(made).toEqual(sorted(made));
    expect(new Set(made).size).toBe(made.length);
    expect(made.every((id) => V7.test(id))).toBe(true);
    // at most 4,096 per millisecond, so 10,000 ids made in one span at least three
    expect(msOf(made.at(-1)!) - t).toBeGreaterThanOrEqual(2);
  });

  it('differs between sources in the random bits', () => {
    const t = 1_800_000_000_000;
    const a = Array.from({ length: 50 }, () => timeOrderedIds(() => t).uuid());
    expect(new Set(a).size).toBe(50);
    expect(new Set(a.map((id) => id.slice(19))).size).toBe(50);
  });
});
