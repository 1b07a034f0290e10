/**
 * The device side of the fleet benchmark, in a process of its own (forked by bench/fleet.ts)
 * so the gateway's event loop serves sockets rather than also driving them:
 *
 *   node --import tsx bench/fleet/devices.ts
 *
 * Calls over the IPC channel (`{id, kind, …}` → `{id, ok, value | error}`):
 * - `open {url, key, count, inFlight}`: connect devices 0…count-1 to the gateway as a device
 *   would — signed upgrade (no nonce), the `hello` answering the server's challenge, wait for
 *   `welcome` — a few handshakes at a time. Each
 *   device acks every `command` frame EXECUTED at once and notes when the command arrived and
 *   when the server confirmed the ack (`acked`).
 * - `openRaw {url, count, inFlight}`: the same number of plain `ws` connections to the
 *   baseline server, which speaks the same frames without any of the control plane.
 * - `collect {expected}`: wait until `expected` acks were confirmed; returns the times
 *   (`Date.now()`, comparable with the parent's clock) and forgets them.
 * - `close`: close every socket.
 *
 * The process exits when its parent disconnects, so a benchmark that dies leaves nothing.
 */
import WebSocket from 'ws';
import { helloAnswering, upgradeHeaders } from '../gateway/fleet.js';
import { deviceIdOf, deviceSecretOf } from './identity.js';

type Call = { id: number; kind: string } & Record<string, unknown>;

const sockets = new Set<WebSocket>();
let commandAt: number[] = [];
let ackedAt: number[] = [];
let waiter: { expected: number; resolve(): void } | undefined;

const settle = () => {
  if (waiter && ackedAt.length >= waiter.expected) {
    waiter.resolve();
    waiter = undefined;
  }
};

function attach(ws: WebSocket): void {
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as {
      type: string;
      command?: { command_id: string };
    };
    if (frame.type === 'command' && frame.command) {
      commandAt.push(Date.now());
      ws.send(
        JSON.stringify({ type: 'ack', command_id: frame.command.command_id, status: 'EXECUTED' }),
      );
    } else if (frame.type === 'acked') {
      ackedAt.push(Date.now());
      settle();
    } else if (frame.type === 'heartbeat') ws.send('{"type":"heartbeat"}');
  });
}

/** Connect to `url`; as `device`, answer the challenge and wait for the welcome. */
function connect(
  url: string,
  headers: Record<string, string>,
  device?: { deviceId: string; secret: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    ws.once('unexpected-response', (_request, response) =>
      reject(new Error(`upgrade refused: ${response.statusCode}`)),
    );
    ws.once('error', reject);
    ws.once('open', () => {
      sockets.add(ws);
      if (!device) {
        attach(ws);
        return resolve();
      }
      const handshake = (data: Buffer) => {
        const hello = helloAnswering(device.deviceId, device.secret, data.toString('utf8'));
        if (hello !== undefined) return ws.send(hello);
        ws.off('message', handshake); // the welcome
        attach(ws);
        resolve();
      };
      ws.on('message', handshake);
    });
  });
}

async function openAll(count: number, inFlight: number, one: (n: number) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < count) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
}

const handlers: Record<string, (call: Call) => Promise<unknown>> = {
  async open(call) {
    const { url, key, count, inFlight } = call as unknown as {
      url: string;
      key: string;
      count: number;
      inFlight: number;
    };
    const started = Date.now();
    await openAll(count, inFlight, (n) => {
      const deviceId = deviceIdOf(n);
      const secret = deviceSecretOf(key, deviceId);
      return connect(
        `${url.replace(/^http/, 'ws')}/api/v1/devices/${deviceId}/ws`,
        upgradeHeaders(deviceId, secret),
        { deviceId, secret },
      );
    });
    return { opened: sockets.size, seconds: (Date.now() - started) / 1000 };
  },
  async openRaw(call) {
    const { url, count, inFlight } = call as unknown as {
      url: string;
      count: number;
      inFlight: number;
    };
    await openAll(count, inFlight, () => connect(url, {}));
    return { opened: sockets.size };
  },
  collect(call) {
    const expected = call.expected as number;
    return new Promise((resolve) => {
      waiter = {
        expected,
        resolve: () => {
          resolve({ commandAt, ackedAt });
          commandAt = [];
          ackedAt = [];
        },
      };
      settle();
    });
  },
  async close() {
    const closing = [...sockets].map(
      (ws) => new Promise<void>((resolve) => (ws.once('close', () => resolve()), ws.close())),
    );
    await Promise.all(closing);
    sockets.clear();
    return null;
  },
};

process.on('message', (call: Call) => {
  const handler = handlers[call.kind];
  if (!handler) {
    process.send?.({ id: call.id, ok: false, error: `unknown call ${call.kind}` });
    return;
  }
  handler(call).then(
    (value) => process.send?.({ id: call.id, ok: true, value }),
    (error: unknown) =>
      process.send?.({
        id: call.id,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, ok: true, value: 'ready' });
