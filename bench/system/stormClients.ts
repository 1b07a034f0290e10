/**
 * One client process of the reconnect storm, forked by bench/system/storm.ts:
 *
 *   node --import tsx bench/system/stormClients.ts SPEC
 *
 * It plays devices `from`…`to - 1`, each bound to one of the process's own 50 loopback
 * addresses (`addressPrefix`.1–50, fresh ephemeral ports per address; closed connections
 * linger in TIME_WAIT). With one address per process, `connect()` came to take most of a
 * client's time in a storm (2026-11-30: in about half the runs its main thread sat in
 * `internalConnect` for seconds, the devices it had already connected could not answer their
 * challenges, and the gateway waited 4–12 s with all its handshake slots held, 46 % idle);
 * with 50, no run stalled. A device connects as the edge agent
 * does — signed upgrade (no nonce), the `hello` with the proof of the server's challenge —
 * and it counts as connected once the `welcome` arrives; against the bare baseline server,
 * with no signature, the device says hello at once and the echo of it stands for the welcome. Calls (bench/gateway/child.ts protocol):
 *
 * - `open {inFlight}`: connect every device, `inFlight` handshakes at a time.
 * - `storm {jitterMs, budgetMs}`: drop every socket at one moment (terminate), then reconnect
 *   every device at once — or each at a random moment within `jitterMs`. A failed attempt is
 *   retried after the edge agent's own backoff (1 s doubling to 60 s, half random); an
 *   upgrade the gateway refused by admission (503 GATEWAY_BUSY) is retried, as the agent does,
 *   after its `Retry-After` plus up to a second at random, without growing the backoff (these
 *   refusals are counted apart, `refusedAttempts`); an upgrade refused otherwise waits at
 *   least its `Retry-After` when it
 *   that is longer — and an attempt without a welcome within 15 s is abandoned and retried,
 *   as the agent does.
 *   Answers the drop moment and each device's reconnect time after it; devices not back
 *   within `budgetMs` are counted as missing and stop retrying.
 * - `close`: close every socket.
 */
import WebSocket from 'ws';
import { backoffDelay } from '../../edge/index.js';
import { serveParent } from '../gateway/child.js';
import {
  deviceIdOf,
  deviceSecretOf,
  helloAnswering,
  socketPathOf,
  upgradeHeaders,
  wsBase,
} from '../gateway/fleet.js';
import { wallClock } from '../queue/system.js';

/** What a client process is started with. */
export interface StormClientSpec {
  url: string;
  benchKey: string;
  from: number;
  to: number;
  /** The first three parts of the process's loopback addresses (`127.A.B`). */
  addressPrefix: string;
  /** Connect without a signature (the bare `ws` baseline). */
  raw: boolean;
}

/** What `open` answers. */
export interface OpenAnswer {
  opened: number;
  failed: number;
  firstError: string | null;
}

/** What `storm` answers. */
export interface StormAnswer {
  /** Wall-clock ms at which every socket was dropped. */
  droppedAt: number;
  /** Per device back within the budget, ms from the drop until its welcome. */
  reconnectMs: number[];
  /** Devices not back within the budget. */
  missing: number;
  /** Attempts that failed and were retried (refusals by admission included). */
  failedAttempts: number;
  /** Of those, upgrades the gateway refused by admission (503 with Retry-After). */
  refusedAttempts: number;
  firstError: string | null;
}

/** The edge agent's reconnect policy (edge/commands/commandChannel.ts defaults). */
const RECONNECT = { baseMs: 1000, maxMs: 60_000 };
const CONNECT_TIMEOUT_MS = 15_000;
/** Loopback addresses per client process (module comment). */
const ADDRESSES = 50;

const spec = JSON.parse(process.argv[2] ?? '') as StormClientSpec;
const sockets = new Map<number, WebSocket>();

/** An upgrade the gateway refused, with the wait it asked for (Retry-After). */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number,
  ) {
    super(`upgrade refused: ${status}`);
  }
}

/** One attempt to connect device `n`: resolves on its welcome, rejects on any failure. */
function connect(n: number): Promise<void> {
  const deviceId = deviceIdOf(n);
  const secret = deviceSecretOf(spec.benchKey, deviceId);
  const ws = new WebSocket(`${wsBase(spec.url)}${socketPathOf(deviceId)}`, {
    headers: spec.raw ? {} : upgradeHeaders(deviceId, secret),
    localAddress: `${spec.addressPrefix}.${(n % ADDRESSES) + 1}`,
    perMessageDeflate: false,
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('no welcome within 15 s')), CONNECT_TIMEOUT_MS);
    function fail(error: Error) {
      clearTimeout(timer);
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
      reject(error);
    }
    ws.once('unexpected-response', (request, response) => {
      request.destroy();
      // as the agent does: wait at least what the gateway asked (503 GATEWAY_BUSY)
      const seconds = Number(response.headers['retry-after']);
      fail(new Refused(response.statusCode ?? 0, Number.isFinite(seconds) ? seconds * 1000 : 0));
    });
    ws.once('error', (error) => fail(error));
    ws.once('close', () => fail(new Error('closed before the welcome')));
    if (spec.raw) ws.once('open', () => ws.send('{"type":"hello"}'));
    ws.on('message', (data: Buffer) => {
      const hello = spec.raw ? undefined : helloAnswering(deviceId, secret, data.toString('utf8'));
      if (hello !== undefined) return ws.send(hello); // the challenge: the welcome is next
      clearTimeout(timer);
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.on('close', () => {
        if (sockets.get(n) === ws) sockets.delete(n);
      });
      // any later frame is a heartbeat or an echo; answer the server's heartbeats
      ws.on('message', (data: Buffer) => {
        if (!spec.raw && data.toString('utf8').includes('"heartbeat"'))
          ws.send('{"type":"heartbeat"}');
      });
      sockets.set(n, ws);
      resolve();
    });
  });
}

let failedAttempts = 0;
let refusedAttempts = 0;
let firstError: string | null = null;

/** Connect device `n`, retrying after the agent's backoff until it succeeds or `over()`. */
async function connectWithRetry(n: number, over: () => boolean): Promise<boolean> {
  let failures = 0;
  while (!over()) {
    try {
      await connect(n);
      return true;
    } catch (error) {
      failedAttempts++;
      firstError ??= error instanceof Error ? error.message : String(error);
      const asked = error instanceof Refused ? error.retryAfterMs : 0;
      let wait: number;
      if (error instanceof Refused && error.status === 503 && asked > 0) {
        refusedAttempts++;
        wait = asked + Math.random() * 1000;
      } else wait = Math.max(backoffDelay(RECONNECT, ++failures), asked);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  return false;
}

async function open(inFlight: number): Promise<OpenAnswer> {
  let next = spec.from;
  let opened = 0;
  let failed = 0;
  let error: string | null = null;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < spec.to) {
        const n = next++;
        try {
          await connect(n);
          opened++;
        } catch (e) {
          failed++;
          error ??= e instanceof Error ? e.message : String(e);
        }
      }
    }),
  );
  return { opened, failed, firstError: error };
}

async function storm(jitterMs: number, budgetMs: number): Promise<StormAnswer> {
  failedAttempts = 0;
  refusedAttempts = 0;
  firstError = null;
  const devices = [...sockets.keys()];
  const droppedAt = wallClock();
  for (const ws of sockets.values()) ws.terminate();
  sockets.clear();
  let over = false;
  let timer: NodeJS.Timeout | undefined;
  // attempts still in flight at the deadline finish on their own; `close` closes their sockets
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      over = true;
      resolve(null);
    }, budgetMs);
  });
  const times = await Promise.all(
    devices.map((n) => {
      const back = (async () => {
        if (jitterMs > 0) await new Promise((r) => setTimeout(r, Math.random() * jitterMs));
        return (await connectWithRetry(n, () => over)) ? wallClock() - droppedAt : null;
      })();
      return Promise.race([back, deadline]);
    }),
  );
  clearTimeout(timer);
  const reconnectMs = times.filter((t): t is number => t !== null);
  return {
    droppedAt,
    reconnectMs,
    missing: devices.length - reconnectMs.length,
    failedAttempts,
    refusedAttempts,
    firstError,
  };
}

async function close(): Promise<number> {
  const closing = [...sockets.values()].map(
    (ws) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => (ws.terminate(), resolve()), 10_000);
        ws.once('close', () => (clearTimeout(timer), resolve()));
        ws.close(1000, 'benchmark done');
      }),
  );
  await Promise.all(closing);
  sockets.clear();
  return closing.length;
}

serveParent(Promise.resolve({}), {
  open: (call) => open(call.inFlight as number),
  storm: (call) => storm(call.jitterMs as number, call.budgetMs as number),
  close: () => close(),
});
