/**
 * A reconnect storm: `devices` WebSocket devices, spread over client processes
 * (bench/system/stormClients.ts), connect and settle; then every client process drops all
 * its sockets at one moment and reconnects them all at once. Measured: each device's time
 * from the drop to its welcome, the time until the last one is back, and — when the server
 * can say — the time until the server itself reports every device online, polled from the
 * moment the storm was ordered.
 */
import { fileURLToPath } from 'node:url';
import { percentile } from '../harness.js';
import { startChild, type Child } from '../gateway/child.js';
import { wallClock } from '../queue/system.js';
import type { OpenAnswer, StormAnswer, StormClientSpec } from './stormClients.js';

const CLIENTS = fileURLToPath(new URL('./stormClients.ts', import.meta.url));
/** Devices per client process (each keeps well under its descriptor limit). */
const PER_CLIENT = 2500;
/** Handshakes in flight per client process while the fleet first connects. */
const OPEN_IN_FLIGHT = 24;
const ONLINE_POLL_MS = 100;
/** Extra time the storm call gets beyond the clients' own budget (in-flight attempts, IPC). */
const CALL_MARGIN_MS = 30_000;

/** What one storm found. */
export interface StormResult {
  /** Devices connected when the storm began. */
  connected: number;
  initialConnectSeconds: number;
  /** Devices back within the budget. */
  reconnected: number;
  /** From the earliest drop until the last device's welcome (null: not all were back in the budget). */
  reconnectAllSeconds: number | null;
  /**
   * From ordering the storm until the server reported every device online (null: not asked,
   * or not within the budget).
   */
  onlineAllSeconds: number | null;
  /** Per-device reconnect times (drop → welcome), ms; null where a missing device decides it. */
  p50: number | null;
  p99: number | null;
  max: number | null;
  failedAttempts: number;
  /** Of those, upgrades refused by admission (503 with Retry-After). */
  refusedAttempts: number;
  firstError: string | null;
}

/** Run a storm of `devices` devices against the server at `url`. */
export async function measureStorm(options: {
  url: string;
  benchKey: string;
  devices: number;
  jitterMs: number;
  /** Second octet of the clients' loopback addresses (distinct per storm: fresh port ranges). */
  subnet: number;
  raw: boolean;
  /** How long devices keep trying after the drop before they count as missing. */
  budgetSeconds: number;
  /** Does the server report `expected` devices online, reconnected after `since` (wall-clock ms)? */
  allOnline?: (since: number, expected: number) => Promise<boolean>;
  live: Set<() => void>;
  progress: (m: string) => void;
}): Promise<StormResult> {
  const { devices, progress } = options;
  const clients: Child[] = [];
  const kill = () => clients.forEach((c) => c.kill());
  options.live.add(kill);
  try {
    for (let from = 0, host = 1; from < devices; from += PER_CLIENT, host++) {
      const spec: StormClientSpec = {
        url: options.url,
        benchKey: options.benchKey,
        from,
        to: Math.min(devices, from + PER_CLIENT),
        addressPrefix: `127.${options.subnet}.${host}`,
        raw: options.raw,
      };
      clients.push(await startChild(CLIENTS, spec));
    }
    const opening = performance.now();
    const opened = await Promise.all(
      clients.map((c) => c.call<OpenAnswer>({ kind: 'open', inFlight: OPEN_IN_FLIGHT })),
    );
    const initialConnectSeconds = (performance.now() - opening) / 1000;
    const connected = opened.reduce((n, o) => n + o.opened, 0);
    const openError = opened.find((o) => o.firstError)?.firstError;
    progress(
      `  ${connected} of ${devices} connected in ${initialConnectSeconds.toFixed(1)} s${openError ? ` (first error: ${openError})` : ''}`,
    );
    // let the last hellos' status writes land before the drop
    await new Promise((resolve) => setTimeout(resolve, 2000));

    const budgetMs = options.budgetSeconds * 1000;
    const ordered = wallClock();
    const storms = Promise.all(
      clients.map((c) =>
        c.call<StormAnswer>(
          { kind: 'storm', jitterMs: options.jitterMs, budgetMs },
          budgetMs + CALL_MARGIN_MS,
        ),
      ),
    );
    // awaited below; until then a failure (a client killed after the server died) is not unhandled
    storms.catch(() => undefined);
    let onlineAllSeconds: number | null = null;
    if (options.allOnline) {
      const deadline = ordered + budgetMs;
      for (;;) {
        if (await options.allOnline(ordered, connected)) {
          onlineAllSeconds = (wallClock() - ordered) / 1000;
          break;
        }
        if (wallClock() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, ONLINE_POLL_MS));
      }
    }
    const answers = await storms;
    const droppedAt = Math.min(...answers.map((a) => a.droppedAt));
    const missing = answers.reduce((n, a) => n + a.missing, 0);
    const backAt = Math.max(...answers.flatMap((a) => a.reconnectMs.map((ms) => a.droppedAt + ms)));
    // a device that never came back ranks after every one that did
    const times = [
      ...answers.flatMap((a) => a.reconnectMs).sort((a, b) => a - b),
      ...Array<number>(missing).fill(Infinity),
    ];
    const finite = (v: number) => (Number.isFinite(v) ? v : null);
    await Promise.all(clients.map((c) => c.call({ kind: 'close' })));
    return {
      connected,
      initialConnectSeconds,
      reconnected: times.length - missing,
      reconnectAllSeconds: missing === 0 ? (backAt - droppedAt) / 1000 : null,
      onlineAllSeconds,
      p50: finite(percentile(times, 50)),
      p99: finite(percentile(times, 99)),
      max: finite(times[times.length - 1] ?? 0),
      failedAttempts: answers.reduce((n, a) => n + a.failedAttempts, 0),
      refusedAttempts: answers.reduce((n, a) => n + a.refusedAttempts, 0),
      firstError: answers.find((a) => a.firstError)?.firstError ?? null,
    };
  } finally {
    kill();
    options.live.delete(kill);
  }
}
