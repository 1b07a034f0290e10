/**
 * The timer wheel behind the hub's heartbeat check: every member visited once per period,
 * the work of a period spread evenly over its steps, members deleted no longer visited.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTickWheel } from '../../gateway/link/tickWheel.js';

describe('tick wheel', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A wheel over `periodMs` recording each step's members. */
  function recordingWheel(periodMs: number) {
    const steps: number[][] = [];
    const wheel = createTickWheel<number>(periodMs, (members) => steps.push([...members]));
    return { wheel, steps };
  }

  it('visits each member once per period, a share of them per step', () => {
    const { wheel, steps } = recordingWheel(30_000);
    for (let i = 0; i < 15_000; i++) wheel.add(i);
    wheel.start();
    vi.advanceTimersByTime(30_000);
    // 1,500 steps of 20 ms, 10 members each, every member in exactly one of them
    expect(steps).toHaveLength(1_500);
    expect(Math.max(...steps.map((s) => s.length))).toBe(10);
    const visits = new Map<number, number>();
    for (const member of steps.flat()) visits.set(member, (visits.get(member) ?? 0) + 1);
    expect(visits.size).toBe(15_000);
    expect([...visits.values()].every((n) => n === 1)).toBe(true);
    // and again in the next period
    vi.advanceTimersByTime(30_000);
    expect(steps.flat()).toHaveLength(30_000);
    wheel.stop();
  });

  it('stops visiting a deleted member, also one deleted during its own step', () => {
    const visited: number[] = [];
    // 10 slots: member m shares its slot with m + 10, m + 20 and m + 30, dealt after it
    const wheel = createTickWheel<number>(200, (members) => {
      for (const member of members) {
        visited.push(member);
        if (member === 2) wheel.delete(12); // later in the step being visited
      }
    });
    for (let i = 0; i < 40; i++) wheel.add(i);
    wheel.delete(0);
    wheel.start();
    vi.advanceTimersByTime(400);
    expect(visited).not.toContain(0);
    expect(visited).not.toContain(12);
    expect(visited.filter((m) => m === 22)).toHaveLength(2);
    expect(visited).toHaveLength(2 * 38);
    wheel.stop();
  });

  it('visits every member at each step when the period is shorter than a step', () => {
    const { wheel, steps } = recordingWheel(15);
    wheel.add(1);
    wheel.add(2);
    wheel.add(2); // added twice, visited once
    wheel.start();
    vi.advanceTimersByTime(45);
    expect(steps).toEqual([
      [1, 2],
      [1, 2],
      [1, 2],
    ]);
  });

  it('does nothing once stopped', () => {
    const { wheel, steps } = recordingWheel(1_000);
    wheel.add(1);
    wheel.start();
    wheel.stop();
    vi.advanceTimersByTime(5_000);
    expect(steps).toHaveLength(0);
  });
});
