/**
 * Connectivity loss for the demo: every few seconds one group of devices loses its network
 * (its proxy resets open connections and refuses new ones) for a few seconds, then gets it
 * back. At least one group stays up so the dashboard always has something online.
 */
import type { TcpProxy } from './tcpProxy.js';

/** How outages are drawn. */
export interface OutagePlan {
  /** Mean time between outage starts. */
  everyMs: number;
  /** Shortest and longest outage. */
  minMs: number;
  maxMs: number;
  random: () => number;
  /** Told about each cut and restore (group index). */
  onChange?: (group: number, up: boolean) => void;
}

/** A running outage schedule. */
export interface Outages {
  /** Stop cutting and restore every group. */
  stop(): void;
}

/** Start cutting `groups` per `plan`. */
export function startOutages(groups: readonly TcpProxy[], plan: OutagePlan): Outages {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) fn();
    }, ms);
    timers.add(t);
  };
  const next = () => later(plan.everyMs * (0.5 + plan.random()), cutOne);
  const cutOne = () => {
    const up = groups.map((g, i) => ({ g, i })).filter(({ g }) => g.up);
    if (up.length > 1) {
      const { g, i } = up[Math.floor(plan.random() * up.length)]!;
      g.cut();
      plan.onChange?.(i, false);
      later(plan.minMs + plan.random() * (plan.maxMs - plan.minMs), () => {
        g.restore();
        plan.onChange?.(i, true);
      });
    }
    next();
  };
  next();
  return {
    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      groups.forEach((g, i) => {
        if (!g.up) {
          g.restore();
          plan.onChange?.(i, true);
        }
      });
    },
  };
}
