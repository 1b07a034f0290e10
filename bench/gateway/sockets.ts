/**
 * One client process of the idle-connection measurement, forked by bench/gateway/idle.ts:
 *
 *   node --expose-gc --import tsx bench/gateway/sockets.ts SPEC
 *
 * `open` connects devices `from`…`to - 1` as each device would — a signed upgrade, then the
 * `hello` answering the gateway's challenge — with a few handshakes in flight at a time, and keeps the sockets open, answering
 * server heartbeats. Each process binds its own loopback address (127.0.0.x), because
 * connections held by one address would exhaust its ~28,000 ephemeral ports across the
 * gateway and baseline runs (closed ones linger in TIME_WAIT). `close` closes them all.
 */
import WebSocket from 'ws';
import { serveParent } from './child.js';
import {
  deviceIdOf,
  deviceSecretOf,
  helloAnswering,
  socketPathOf,
  upgradeHeaders,
  wsBase,
} from './fleet.js';

/** What a client process is started with. */
export interface SocketsSpec {
  url: string;
  benchKey: string;
  from: number;
  to: number;
  localAddress: string;
  inFlight: number;
}

/** What `open` reports. */
export interface OpenReport {
  opened: number;
  failed: number;
  firstError: string | null;
  seconds: number;
}

const spec = JSON.parse(process.argv[2] ?? '') as SocketsSpec;
const sockets = new Set<WebSocket>();

function connect(n: number): Promise<void> {
  const deviceId = deviceIdOf(n);
  const secret = deviceSecretOf(spec.benchKey, deviceId);
  const ws = new WebSocket(`${wsBase(spec.url)}${socketPathOf(deviceId)}`, {
    headers: upgradeHeaders(deviceId, secret),
    localAddress: spec.localAddress,
    perMessageDeflate: false,
  });
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (request, response) => {
      request.destroy();
      reject(new Error(`upgrade refused: ${response.statusCode}`));
    });
    ws.on('error', reject);
    ws.on('open', () => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.on('message', (data: Buffer) => {
        const text = data.toString('utf8');
        const hello = helloAnswering(deviceId, secret, text);
        if (hello !== undefined) return ws.send(hello);
        // any frame proves the device alive; answer the server's heartbeat with one
        if (text.includes('"heartbeat"')) ws.send('{"type":"heartbeat"}');
      });
      resolve();
    });
  });
}

async function open(): Promise<OpenReport> {
  const started = performance.now();
  let next = spec.from;
  let opened = 0;
  let failed = 0;
  let firstError: string | null = null;
  await Promise.all(
    Array.from({ length: spec.inFlight }, async () => {
      while (next < spec.to) {
        const n = next++;
        try {
          await connect(n);
          opened++;
        } catch (error) {
          failed++;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  return { opened, failed, firstError, seconds: (performance.now() - started) / 1000 };
}

async function close(): Promise<number> {
  const closing = [...sockets].map(
    (ws) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          ws.terminate();
          resolve();
        }, 10_000);
        ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        ws.close(1000, 'benchmark done');
      }),
  );
  await Promise.all(closing);
  return closing.length;
}

serveParent(Promise.resolve({}), {
  open: () => open(),
  held: () => Promise.resolve(sockets.size),
  close: () => close(),
});
