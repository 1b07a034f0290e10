/**
 * Command push round trip at a paced rate (open loop: a command is due every 1/rate s
 * whether or not earlier ones are done, so a server that falls behind shows it as latency
 * instead of slowing the load). An operator POSTs `UPDATE_CONFIG` to one of D devices whose
 * sockets are open in this process; the device acks each command as it arrives; times are
 * taken on this process's clock from the moment the POST was due:
 *
 * - delivery: due → the `command` frame arrives at the device;
 * - round trip: due → the device receives the server's `acked` frame, i.e. the command was
 *   created (committed), pushed, executed by the device and its EXECUTED state committed.
 *
 * The baselines, at the same rate: frames of the same size over raw `ws` connections to an
 * echo server, timed to the echo; and the durable floor (server.ts's `durable-ws`): the
 * operator's HTTP POST, through the same keep-alive agent, answered 201 once a row is
 * committed and the `command` frame pushed on the device's socket, whose `ack` is answered
 * `acked` once a second row is committed — the round trip above over the same transports,
 * minus everything but its two commits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { percentile } from '../harness.js';
import {
  deviceIdOf,
  deviceSecretOf,
  helloAnswering,
  socketPathOf,
  upgradeHeaders,
  wsBase,
} from './fleet.js';
import { keepAlive, send } from './http.js';

/** What a push measurement found (milliseconds). */
export interface PushResult {
  rttP50: number;
  rttP99: number;
  deliveryP50: number;
  deliveryP99: number;
  sent: number;
  completed: number;
  /** Commands due per second that were actually issued (the client kept up if ≈ rate). */
  issuedPerS: number;
  /** Commands completed per second, first due to last acked: the capacity when saturated. */
  completedPerS: number;
  failedPosts: number;
}

/** Round trips of a baseline (milliseconds). */
export interface EchoResult {
  p50: number;
  p99: number;
  completed: number;
  /** Round trips completed per second, first due to last completed. */
  completedPerS: number;
}

const SETTLE_MS = 30_000;
/** Items of a measurement's warm-up round, at most. */
const WARM_UP_ITEMS = 500;

/** Items a measurement of `count` sends, its warm-up round included. */
export const withWarmUp = (count: number): number => Math.min(WARM_UP_ITEMS, count) + count;

/**
 * Call `fire(i)` for i in 0…count-1, each at `start + i / rate`; returns the due times and
 * the issuing rate reached.
 */
async function paced(
  count: number,
  rate: number,
  fire: (i: number) => void,
): Promise<{ due: Float64Array; issuedPerS: number }> {
  const interval = 1000 / rate;
  const due = new Float64Array(count);
  const start = performance.now() + 20;
  let i = 0;
  while (i < count) {
    const now = performance.now();
    while (i < count && start + i * interval <= now) {
      due[i] = start + i * interval;
      fire(i);
      i++;
    }
    await sleep(1);
  }
  return { due, issuedPerS: count / ((performance.now() - start) / 1000) };
}

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline) await sleep(10);
}

const ms = (values: number[], p: number) =>
  percentile(
    values.sort((a, b) => a - b),
    p,
  );

/** Open `deviceId`'s socket and wait for the server's welcome. */
function openDevice(
  url: string,
  benchKey: string,
  deviceId: string,
  onFrame: (ws: WebSocket, frame: Record<string, unknown>) => void,
): Promise<WebSocket> {
  const secret = deviceSecretOf(benchKey, deviceId);
  const ws = new WebSocket(`${wsBase(url)}${socketPathOf(deviceId)}`, {
    headers: upgradeHeaders(deviceId, secret),
    perMessageDeflate: false,
  });
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (_request, response) =>
      reject(new Error(`upgrade refused: ${response.statusCode}`)),
    );
    ws.on('error', reject);
    ws.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      const hello = helloAnswering(deviceId, secret, text);
      if (hello !== undefined) return ws.send(hello);
      const frame = JSON.parse(text) as Record<string, unknown>;
      if (frame.type === 'welcome') resolve(ws);
      else if (frame.type === 'heartbeat') ws.send('{"type":"heartbeat"}');
      else onFrame(ws, frame);
    });
  });
}

/** Measure command push through the gateway at `url`. */
export async function measurePush(options: {
  url: string;
  adminToken: string;
  benchKey: string;
  devices: readonly number[];
  count: number;
  rate: number;
  progress: (m: string) => void;
}): Promise<PushResult> {
  const { url, adminToken, benchKey, devices, count, rate, progress } = options;
  const agent = keepAlive(64);
  // times by command sequence number; the sequence travels in the payload's `reason`
  let received = new Float64Array(0);
  let acked = new Float64Array(0);
  const sequenceOf = new Map<string, number>();
  const onFrame = (ws: WebSocket, frame: Record<string, unknown>) => {
    if (frame.type === 'command') {
      const command = frame.command as { command_id: string; payload: { reason?: string } };
      const seq = Number(command.payload.reason?.slice('bench '.length));
      if (seq < received.length && received[seq] === 0) received[seq] = performance.now();
      sequenceOf.set(command.command_id, seq);
      ws.send(JSON.stringify({ type: 'ack', command_id: command.command_id, status: 'EXECUTED' }));
    } else if (frame.type === 'acked') {
      const seq = sequenceOf.get(frame.command_id as string);
      if (seq !== undefined && seq < acked.length && acked[seq] === 0)
        acked[seq] = performance.now();
    }
  };
  const sockets = await Promise.all(
    devices.map((n) => openDevice(url, benchKey, deviceIdOf(n), onFrame)),
  );
  try {
    const round = async (n: number) => {
      received = new Float64Array(n);
      acked = new Float64Array(n);
      sequenceOf.clear();
      let failedPosts = 0;
      const posts: Promise<void>[] = [];
      const { due, issuedPerS } = await paced(n, rate, (i) => {
        const deviceId = deviceIdOf(devices[i % devices.length]!);
        posts.push(
          send(agent, url, `/api/v1/devices/${deviceId}/commands`, {
            method: 'POST',
            headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              command_type: 'UPDATE_CONFIG',
              payload: { reason: `bench ${i}` },
            }),
          }).then(
            (answer) => void (answer.status === 201 || failedPosts++),
            () => void failedPosts++,
          ),
        );
      });
      await Promise.all(posts);
      await until(() => acked.every((t) => t > 0), SETTLE_MS);
      const rtt: number[] = [];
      const delivery: number[] = [];
      let lastAck = 0;
      for (let i = 0; i < n; i++) {
        if (acked[i]! > 0) rtt.push(acked[i]! - due[i]!);
        if (received[i]! > 0) delivery.push(received[i]! - due[i]!);
        lastAck = Math.max(lastAck, acked[i]!);
      }
      const completedPerS = rtt.length / ((lastAck - due[0]!) / 1000);
      return { rtt, delivery, issuedPerS, completedPerS, failedPosts };
    };
    progress(`  warm-up: ${Math.min(WARM_UP_ITEMS, count)} commands`);
    await round(Math.min(WARM_UP_ITEMS, count));
    progress(`  ${count} commands at ${rate}/s over ${devices.length} device sockets`);
    const r = await round(count);
    return {
      rttP50: ms(r.rtt, 50),
      rttP99: ms(r.rtt, 99),
      deliveryP50: ms(r.delivery, 50),
      deliveryP99: ms(r.delivery, 99),
      sent: count,
      completed: r.rtt.length,
      issuedPerS: r.issuedPerS,
      completedPerS: r.completedPerS,
      failedPosts: r.failedPosts,
    };
  } finally {
    for (const ws of sockets) ws.close();
    agent.destroy();
  }
}

/**
 * Paced round trips over `sockets` raw connections, socket k to `urlOf(k)`: `fire(i, ws)`
 * starts item i at its due time with ws = socket i mod sockets (and may return the promise of
 * its request, awaited before the round settles); `onMessage` answers a frame if it must and
 * returns the number of the item the frame completes (undefined for none). A warm-up round
 * of up to WARM_UP_ITEMS items, then `count`; times from each item's due time to its
 * completion.
 */
async function measureRoundTrips(options: {
  urlOf: (k: number) => string;
  sockets: number;
  count: number;
  rate: number;
  fire: (i: number, ws: WebSocket) => Promise<unknown> | void;
  onMessage: (ws: WebSocket, text: string) => number | undefined;
}): Promise<EchoResult> {
  const { count, rate } = options;
  let doneAt = new Float64Array(0);
  const sockets = await Promise.all(
    Array.from(
      { length: options.sockets },
      (_, k) =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(options.urlOf(k), { perMessageDeflate: false });
          ws.on('message', (data: Buffer) => {
            const seq = options.onMessage(ws, data.toString('utf8'));
            if (seq !== undefined && seq < doneAt.length) doneAt[seq] = performance.now();
          });
          ws.on('open', () => resolve(ws));
          ws.on('error', reject);
        }),
    ),
  );
  try {
    const round = async (n: number) => {
      doneAt = new Float64Array(n);
      const requests: Promise<unknown>[] = [];
      const { due } = await paced(n, rate, (i) => {
        const request = options.fire(i, sockets[i % sockets.length]!);
        // a failed request leaves its item uncompleted; handled now, not when the round ends,
        // so that a connection reset is not an unhandled rejection meanwhile
        if (request) requests.push(request.then(undefined, () => undefined));
      });
      await Promise.allSettled(requests);
      await until(() => doneAt.every((t) => t > 0), SETTLE_MS);
      const rtt: number[] = [];
      let last = 0;
      for (let i = 0; i < n; i++) {
        if (doneAt[i]! > 0) rtt.push(doneAt[i]! - due[i]!);
        last = Math.max(last, doneAt[i]!);
      }
      return { rtt, completedPerS: rtt.length / ((last - due[0]!) / 1000) };
    };
    await round(Math.min(WARM_UP_ITEMS, count));
    const { rtt, completedPerS } = await round(count);
    return { p50: ms(rtt, 50), p99: ms(rtt, 99), completed: rtt.length, completedPerS };
  } finally {
    for (const ws of sockets) ws.close();
  }
}

/** Echo round trips of frames shaped like a pushed command over raw `ws` at `url`. */
export function measureEcho(options: {
  url: string;
  sockets: number;
  count: number;
  rate: number;
}): Promise<EchoResult> {
  // a command frame as the gateway sends it, give or take the id
  const frame = (i: number) =>
    JSON.stringify({
      type: 'command',
      command: {
        command_id: '00000000-0000-4000-8000-000000000000',
        device_id: deviceIdOf(i),
        command_type: 'UPDATE_CONFIG',
        payload: { reason: `bench ${i}` },
        status: 'DELIVERED',
        retry_count: 0,
        max_retries: 3,
        created_by: 'admin',
        created_at: new Date().toISOString(),
        delivered_at: new Date().toISOString(),
        next_attempt_at: null,
        expires_at: null,
        executed_at: null,
        result: null,
        error: null,
      },
    });
  return measureRoundTrips({
    ...options,
    urlOf: () => `${wsBase(options.url)}/echo`,
    fire: (i, ws) => ws.send(frame(i)),
    onMessage: (_ws, text) => {
      const echoed = JSON.parse(text) as { command: { payload: { reason: string } } };
      return Number(echoed.command.payload.reason.slice('bench '.length));
    },
  });
}

/**
 * The durable push floor at `url` (a `durable-ws` server), paced at `rate` over `sockets`
 * device sockets: per command, an HTTP `POST /floor/{n}` (the same keep-alive agent and
 * client as the operator's in measurePush) → commit → `command` on device n's socket (and
 * 201) → `ack` → commit → `acked`; times from the moment each POST was due until its `acked`
 * arrived. A POST that fails leaves its command uncompleted.
 */
export async function measureDurableFloor(options: {
  url: string;
  sockets: number;
  count: number;
  rate: number;
}): Promise<EchoResult> {
  const { url, sockets } = options;
  const agent = keepAlive(64);
  try {
    return await measureRoundTrips({
      ...options,
      urlOf: (n) => `${wsBase(url)}/floor/ws/${n}`,
      fire: (i) =>
        send(agent, url, `/floor/${i % sockets}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ seq: i }),
        }),
      onMessage: (ws, text) => {
        const frame = JSON.parse(text) as { type: string; seq: number };
        if (frame.type !== 'command') return frame.seq;
        ws.send(JSON.stringify({ type: 'ack', seq: frame.seq }));
        return undefined;
      },
    });
  } finally {
    agent.destroy();
  }
}
