/**
 * Idle WebSocket connections held by one server process, and the memory each costs: the
 * server's resident set after full collections, before and after the connections are open,
 * divided by the connections it reports holding. The clients run in their own processes
 * (bench/gateway/sockets.ts), a few thousand each, so the server's descriptor limit is spent
 * on the connections being measured.
 */
import { fileURLToPath } from 'node:url';
import { cpuBetween, readCpu } from '../cpu.js';
import { startChild, type Child } from './child.js';
import type { OpenReport, SocketsSpec } from './sockets.js';

const SOCKETS = fileURLToPath(new URL('./sockets.ts', import.meta.url));
/** Connections per client process (each keeps well under its descriptor limit). */
const PER_CLIENT = 4000;
/** Handshakes in flight per client process. */
const IN_FLIGHT = 24;

/** What one idle measurement found. */
export interface IdleResult {
  held: number;
  failed: number;
  firstError: string | null;
  bytesPerConnection: number;
  heapBytesPerConnection: number;
  connectSeconds: number;
  /** SQL statements the server sent per connection held (handshake, hello, presence); null for a server that does not count them. */
  statementsPerConnection: number | null;
  /**
   * CPU milliseconds per connection held over the connect span — the server's, the client
   * processes', PostgreSQL's — or null off Linux.
   */
  cpuMsPerConnection: { server: number; clients: number; postgres: number } | null;
  /** The server's event-loop gaps while it held the connections `holdMs`; null without. */
  heldLoopDelay: LoopDelay | null;
  /**
   * The share of one core the server, the client processes and PostgreSQL each used while
   * the connections were held `holdMs` with nothing else going on (their liveness traffic and
   * the server's periodic work); null without a hold, or off Linux.
   */
  heldCpuShare: { server: number; clients: number; postgres: number } | null;
}

/** The gaps between a server's event-loop timer ticks over a part (bench/gateway/server.ts `loopDelay`). */
export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
}

interface Memory {
  rss: number;
  heapUsed: number;
}

/** Open `count` device connections (devices `first`… ) to `server` and measure them. */
export async function measureIdle(options: {
  server: Child;
  url: string;
  benchKey: string;
  first: number;
  count: number;
  /** Third octet of the clients' loopback addresses (distinct per run: fresh port ranges). */
  subnet: number;
  /**
   * After measuring, hold the connections this long with nothing else going on and report
   * the server's event-loop gaps meanwhile (its periodic work over all of them shows there).
   */
  holdMs?: number;
  /**
   * Runs after the hold, while the connections are still open (before they are closed), with
   * the pids of the client processes that hold them.
   */
  whileHeld?: (clientPids: readonly number[]) => Promise<void>;
  progress: (m: string) => void;
}): Promise<IdleResult> {
  const { server, url, benchKey, first, count, subnet, holdMs = 0, whileHeld, progress } = options;
  const clients: Child[] = [];
  const spawn = async (from: number, to: number, host: number) => {
    const spec: SocketsSpec = {
      url,
      benchKey,
      from,
      to,
      localAddress: `127.0.${subnet}.${host}`,
      inFlight: IN_FLIGHT,
    };
    const child = await startChild(SOCKETS, spec);
    clients.push(child);
    return child;
  };
  try {
    // warm-up: the code paths of a connection, then back to idle
    const warm = await spawn(first, first + Math.min(200, count), 1);
    await warm.call<OpenReport>({ kind: 'open' });
    await warm.call({ kind: 'close' });
    await waitFor(async () => (await server.call<number>({ kind: 'connections' })) === 0);
    const before = await server.call<Memory>({ kind: 'memory' });
    const statementsBefore = await statementsOf(server);

    const parts = Math.ceil(count / PER_CLIENT);
    const children = await Promise.all(
      Array.from({ length: parts }, (_, i) =>
        spawn(first + i * PER_CLIENT, first + Math.min(count, (i + 1) * PER_CLIENT), i + 2),
      ),
    );
    const clientPids = children.map((c) => c.pid);
    const cpuBefore = { server: readCpu([server.pid]), clients: readCpu(clientPids) };
    const started = performance.now();
    const ticker = setInterval(() => {
      void server
        .call<number>({ kind: 'connections' })
        .then((n) => progress(`  ${n} connections open`))
        .catch(() => undefined);
    }, 10_000);
    let reports: OpenReport[];
    try {
      reports = await Promise.all(children.map((c) => c.call<OpenReport>({ kind: 'open' })));
    } finally {
      clearInterval(ticker);
    }
    const connectSeconds = (performance.now() - started) / 1000;
    const cpuAfter = { server: readCpu([server.pid]), clients: readCpu(clientPids) };
    // let the last hellos and status writes finish before measuring
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const held = await server.call<number>({ kind: 'connections' });
    const after = await server.call<Memory>({ kind: 'memory' });
    const statementsAfter = await statementsOf(server);
    const failed = reports.reduce((n, r) => n + r.failed, 0);
    const firstError = reports.find((r) => r.firstError)?.firstError ?? null;
    progress(
      `  ${held} held (${failed} failed${firstError ? `: ${firstError}` : ''}) after ${connectSeconds.toFixed(1)} s; RSS ${mib(before.rss)} → ${mib(after.rss)} MiB`,
    );
    let heldLoopDelay: LoopDelay | null = null;
    let heldCpuShare: IdleResult['heldCpuShare'] = null;
    if (holdMs > 0) {
      progress(`  holding them ${holdMs / 1000} s idle`);
      await server.call({ kind: 'loopDelay' }); // from here
      const cpuFrom = { server: readCpu([server.pid]), clients: readCpu(clientPids) };
      const from = performance.now();
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      const cpuTo = { server: readCpu([server.pid]), clients: readCpu(clientPids) };
      const seconds = (performance.now() - from) / 1000;
      heldLoopDelay = await server.call<LoopDelay>({ kind: 'loopDelay' });
      if (cpuFrom.server && cpuTo.server && cpuFrom.clients && cpuTo.clients) {
        const served = cpuBetween(cpuFrom.server, cpuTo.server);
        heldCpuShare = {
          server: served.workerSeconds / seconds,
          clients: cpuBetween(cpuFrom.clients, cpuTo.clients).workerSeconds / seconds,
          postgres: served.serverSeconds / seconds,
        };
      }
      progress(
        `  held: server ${percent(heldCpuShare?.server)}, clients ${percent(heldCpuShare?.clients)}, PostgreSQL ${percent(heldCpuShare?.postgres)} of a core`,
      );
    }
    await whileHeld?.(clientPids);
    await Promise.all(children.map((c) => c.call({ kind: 'close' })));
    return {
      heldLoopDelay,
      heldCpuShare,
      held,
      failed,
      firstError,
      bytesPerConnection: held > 0 ? (after.rss - before.rss) / held : 0,
      heapBytesPerConnection: held > 0 ? (after.heapUsed - before.heapUsed) / held : 0,
      connectSeconds,
      cpuMsPerConnection:
        held > 0 && cpuBefore.server && cpuAfter.server && cpuBefore.clients && cpuAfter.clients
          ? {
              server: (1000 * cpuBetween(cpuBefore.server, cpuAfter.server).workerSeconds) / held,
              clients:
                (1000 * cpuBetween(cpuBefore.clients, cpuAfter.clients).workerSeconds) / held,
              postgres: (1000 * cpuBetween(cpuBefore.server, cpuAfter.server).serverSeconds) / held,
            }
          : null,
      statementsPerConnection:
        held > 0 && statementsBefore !== null && statementsAfter !== null
          ? (statementsAfter - statementsBefore) / held
          : null,
    };
  } finally {
    for (const c of clients) c.kill();
  }
}

/** The statements `server` has sent so far, or null when it does not count them. */
export const statementsOf = (server: Child): Promise<number | null> =>
  server.call<number>({ kind: 'statements' }).catch(() => null);

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const percent = (share: number | undefined) =>
  share === undefined ? '?' : `${(100 * share).toFixed(1)} %`;

/** Poll `done` until it holds (at most `timeoutMs`). */
export async function waitFor(done: () => Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
