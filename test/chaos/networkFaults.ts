/**
 * Network faults on the device groups' proxies: every few seconds one group either loses its
 * network for a few seconds (open connections reset, new ones refused), gets a slow link
 * (each chunk delayed by hundreds of milliseconds), or has every open connection reset at
 * once (a flapping link). At most half the groups are cut at a time, so the cloud always has
 * terminals to talk to. `stop()` lifts every fault.
 */
import type { TcpProxy } from '../../bin/demo/tcpProxy.js';

/** What the faults did. */
export interface NetworkFaultCounts {
  cuts: number;
  slowLinks: number;
  resets: number;
}

/** A running fault schedule. */
export interface NetworkFaults {
  readonly counts: NetworkFaultCounts;
  /** Stop injecting and lift every fault. */
  stop(): void;
}

/** Start injecting faults into `proxies` about every `everyMs`. */
export function startNetworkFaults(
  proxies: readonly TcpProxy[],
  options: { everyMs: number; random: () => number; onEvent?: (text: string) => void },
): NetworkFaults {
  const { random } = options;
  const counts: NetworkFaultCounts = { cuts: 0, slowLinks: 0, resets: 0 };
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) fn();
    }, ms);
    timers.add(t);
  };
  const between = (min: number, max: number) => min + random() * (max - min);

  const strike = () => {
    const g = Math.floor(random() * proxies.length);
    const proxy = proxies[g]!;
    const roll = random();
    const cut = proxies.filter((p) => !p.up).length;
    if (roll < 0.45 && proxy.up && cut < proxies.length / 2) {
      counts.cuts++;
      proxy.cut();
      const ms = between(3_000, 9_000);
      options.onEvent?.(`group ${g} cut for ${Math.round(ms / 1000)} s`);
      later(ms, () => proxy.restore());
    } else if (roll < 0.75 && proxy.latencyMs === 0) {
      counts.slowLinks++;
      proxy.latencyMs = Math.round(between(200, 1_200));
      options.onEvent?.(`group ${g} slowed to ${proxy.latencyMs} ms per chunk`);
      later(between(4_000, 10_000), () => (proxy.latencyMs = 0));
    } else {
      counts.resets++;
      proxy.reset();
      options.onEvent?.(`group ${g} connections reset`);
    }
    later(options.everyMs * (0.5 + random()), strike);
  };
  later(options.everyMs * random(), strike);

  return {
    counts,
    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const p of proxies) {
        p.latencyMs = 0;
        if (!p.up) p.restore();
      }
    },
  };
}
