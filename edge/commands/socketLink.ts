/**
 * The device's end of its command socket (protocol: gateway/link/frames.ts and
 * docs/device-plane.md): connect with a signed upgrade (no nonce), answer the server's
 * `challenge` with a `hello` carrying the proof, wait for `welcome`, answer the server's
 * heartbeats (and send one in any interval the device was otherwise silent), correlate
 * `acked` / `error` replies with the acks sent, and reconnect after any close with
 * exponential backoff and jitter.
 *
 * A gateway that refuses the upgrade only because too many devices are connecting at once
 * (503 with `Retry-After`) is not a failure: the agent comes back after the time it was
 * given, plus up to a second drawn at random, without growing its backoff. The gateway
 * spreads its `Retry-After` over the time it needs to take everyone in; a backoff that grew
 * with each refusal would leave devices waiting up to a minute while the gateway stood idle.
 *
 * A connection counts as up only once `welcome` arrives, and as dead when nothing has been
 * heard for three heartbeat intervals (the server's own rule), or when `welcome` does not
 * come within the connect timeout — a socket half-open behind a NAT otherwise looks alive
 * forever while commands pile up in the cloud. Every timer comes from the injected
 * {@link EdgeTimers}, and `stop()` closes the socket and clears them all.
 *
 * The agent speaks only the challenge handshake: a gateway of an earlier release refuses
 * its nonce-less upgrade (401), so gateways are upgraded before agents. A gateway that
 * opens the socket but sends no challenge gets no hello, and the connect timeout ends it.
 */
import type WebSocket from 'ws';
import { z } from 'zod';
import type { CloudClient } from '../cloud/cloudClient.js';
import { backoffDelay, type BackoffPolicy } from '../../runtime/index.js';
import type { EdgeTimers } from '../timers/timers.js';
import type { CommandAck } from './commandLedger.js';

/** The server's answer to an ack. */
export type AckReply =
  | { kind: 'acked'; repeated: boolean }
  /** The cloud will never take this ack (unknown command, conflicting ack, card data). */
  | { kind: 'refused'; code: string; message: string };

/** The `welcome` frame. */
export interface Welcome {
  session_id: string;
  heartbeat_interval_ms: number;
}

const serverFrame = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('challenge'), challenge: z.string().min(1).max(200) }),
  z.looseObject({
    type: z.literal('welcome'),
    session_id: z.string(),
    heartbeat_interval_ms: z.number().positive(),
  }),
  z.looseObject({ type: z.literal('command'), command: z.unknown() }),
  z.looseObject({
    type: z.literal('acked'),
    command_id: z.string(),
    repeated: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal('error'),
    code: z.string(),
    message: z.string(),
    command_id: z.string().optional(),
  }),
  z.looseObject({ type: z.literal('heartbeat') }),
]);

/** Error codes of an `error` frame that mean the ack will never be taken. */
const FINAL_ACK_ERRORS = new Set(['COMMAND_NOT_FOUND', 'ACK_CONFLICT', 'CARD_DATA_IN_CLEAR']);

/** What the link needs. */
export interface SocketLinkDeps {
  cloud: CloudClient;
  timers: EdgeTimers;
  now: () => Date;
  random: () => number;
  reconnect: BackoffPolicy;
  /** Close a connection that has not said `welcome` after this long. */
  connectTimeoutMs: number;
  /** Give up waiting for an ack's reply after this long. */
  ackTimeoutMs: number;
  /** Heartbeat period until the server names its own. */
  heartbeatIntervalMs: number;
  onUp(welcome: Welcome): void;
  onDown(info: { code: number; reason: string; retryInMs: number }): void;
  onCommand(command: unknown): void;
  /** A frame that is not valid JSON or not a known shape. */
  onInvalid(message: string): void;
}

/** One device socket, kept open. */
export interface SocketLink {
  start(): void;
  stop(): Promise<void>;
  /** Whether `welcome` arrived on the current connection. */
  isUp(): boolean;
  /** Failed connection attempts since the last `welcome`. */
  failures(): number;
  /** Send an ack and wait for the server's reply; rejects when it cannot be had. */
  sendAck(ack: CommandAck): Promise<AckReply>;
}

interface Waiter {
  resolve(reply: AckReply): void;
  reject(error: Error): void;
  timer: unknown;
}

/** Create the link (not started). */
export function createSocketLink(deps: SocketLinkDeps): SocketLink {
  const { timers } = deps;
  let socket: WebSocket | undefined;
  let up = false;
  let stopped = true;
  let failed = 0;
  let heardAt = 0;
  let sentAt = 0;
  let heartbeatMs = deps.heartbeatIntervalMs;
  let reconnectTimer: unknown;
  let connectTimer: unknown;
  let watchdog: unknown;
  let closed: Promise<void> = Promise.resolve();
  const waiters = new Map<string, Waiter[]>();

  const clear = (timer: unknown) => {
    if (timer !== undefined) timers.clearTimeout(timer);
  };
  const nowMs = () => deps.now().getTime();

  const send = (frame: unknown): boolean => {
    if (!socket || socket.readyState !== socket.OPEN) return false;
    socket.send(JSON.stringify(frame));
    sentAt = nowMs();
    return true;
  };

  const settle = (commandId: string, reply: AckReply | Error) => {
    const list = waiters.get(commandId);
    if (!list) return;
    waiters.delete(commandId);
    for (const waiter of list) {
      clear(waiter.timer);
      if (reply instanceof Error) waiter.reject(reply);
      else waiter.resolve(reply);
    }
  };

  const tick = () => {
    watchdog = undefined;
    if (!socket || !up) return;
    const at = nowMs();
    if (at - heardAt > 3 * heartbeatMs) {
      socket.terminate(); // the close handler reconnects
      return;
    }
    if (at - sentAt >= heartbeatMs / 2) send({ type: 'heartbeat' });
    watchdog = timers.setTimeout(tick, heartbeatMs);
  };

  const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
    heardAt = nowMs();
    if (isBinary) return deps.onInvalid('binary frame');
    let value: unknown;
    try {
      const bytes = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(data);
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      return deps.onInvalid('a frame is not JSON');
    }
    const parsed = serverFrame.safeParse(value);
    if (!parsed.success) {
      const type = (value as { type?: unknown } | null)?.type;
      // frames of types added later are ignored; known types must be well formed
      if (
        !['challenge', 'welcome', 'command', 'acked', 'error', 'heartbeat'].includes(String(type))
      )
        return;
      return deps.onInvalid(`malformed ${String(type)} frame`);
    }
    const frame = parsed.data;
    switch (frame.type) {
      case 'challenge':
        if (!up) send({ type: 'hello', proof: deps.cloud.proveSocket(frame.challenge) });
        return;
      case 'welcome': {
        clear(connectTimer);
        connectTimer = undefined;
        heartbeatMs = frame.heartbeat_interval_ms;
        up = true;
        failed = 0;
        clear(watchdog);
        watchdog = timers.setTimeout(tick, heartbeatMs);
        deps.onUp({ session_id: frame.session_id, heartbeat_interval_ms: heartbeatMs });
        return;
      }
      case 'command':
        deps.onCommand(frame.command);
        return;
      case 'acked':
        settle(frame.command_id, { kind: 'acked', repeated: frame.repeated === true });
        return;
      case 'error':
        if (frame.command_id !== undefined)
          settle(
            frame.command_id,
            FINAL_ACK_ERRORS.has(frame.code)
              ? { kind: 'refused', code: frame.code, message: frame.message }
              : new Error(`${frame.code}: ${frame.message}`),
          );
        return;
      case 'heartbeat':
        send({ type: 'heartbeat' });
        return;
      default: {
        const never: never = frame;
        return never;
      }
    }
  };

  const connect = () => {
    reconnectTimer = undefined;
    if (stopped) return;
    const ws = deps.cloud.openSocket();
    socket = ws;
    heardAt = sentAt = nowMs();
    let resolveClosed!: () => void;
    closed = new Promise((resolve) => (resolveClosed = resolve));
    connectTimer = timers.setTimeout(() => {
      connectTimer = undefined;
      if (socket === ws && !up) ws.terminate();
    }, deps.connectTimeoutMs);
    // the gateway refused the upgrade: wait at least as long as it asked before trying again;
    // a 503 (GATEWAY_BUSY in a reconnect storm) is admission, not failure
    let retryAfterMs = 0;
    let admission = false;
    ws.on('unexpected-response', (_request, response) => {
      const seconds = Number(response.headers['retry-after']);
      if (Number.isFinite(seconds) && seconds > 0) {
        retryAfterMs = Math.min(seconds, 600) * 1000;
        admission = response.statusCode === 503;
      }
      response.resume();
      ws.terminate();
    });
    ws.on('message', onMessage);
    ws.on('error', () => undefined); // a close always follows; it reconnects
    ws.on('close', (code: number, reason: Buffer) => {
      clear(connectTimer);
      clear(watchdog);
      connectTimer = watchdog = undefined;
      if (socket === ws) socket = undefined;
      up = false;
      for (const id of [...waiters.keys()]) settle(id, new Error('the socket closed'));
      resolveClosed();
      if (stopped) return;
      let retryInMs: number;
      if (admission) retryInMs = retryAfterMs + Math.round(deps.random() * 1000);
      else {
        failed += 1;
        retryInMs = Math.max(backoffDelay(deps.reconnect, failed, deps.random), retryAfterMs);
      }
      reconnectTimer = timers.setTimeout(connect, retryInMs);
      deps.onDown({ code, reason: reason.toString('utf8'), retryInMs });
    });
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      failed = 0;
      connect();
    },
    async stop() {
      stopped = true;
      clear(reconnectTimer);
      reconnectTimer = undefined;
      const ws = socket;
      if (ws) {
        if (ws.readyState === ws.OPEN) {
          ws.close(1000, 'agent stopping');
          const fallback = timers.setTimeout(() => ws.terminate(), 2_000);
          await closed;
          clear(fallback);
        } else {
          ws.terminate();
          await closed;
        }
      }
    },
    isUp: () => up,
    failures: () => failed,
    sendAck(ack) {
      return new Promise<AckReply>((resolve, reject) => {
        const sent = send({
          type: 'ack',
          command_id: ack.commandId,
          status: ack.status,
          ...(ack.result !== undefined ? { result: ack.result } : {}),
          ...(ack.error !== undefined ? { error: ack.error } : {}),
        });
        if (!sent || !up) return reject(new Error('the socket is not up'));
        const waiter: Waiter = {
          resolve,
          reject,
          timer: timers.setTimeout(() => {
            const list = waiters.get(ack.commandId)?.filter((w) => w !== waiter) ?? [];
            if (list.length > 0) waiters.set(ack.commandId, list);
            else waiters.delete(ack.commandId);
            reject(new Error('no reply to the ack in time'));
          }, deps.ackTimeoutMs),
        };
        waiters.set(ack.commandId, [...(waiters.get(ack.commandId) ?? []), waiter]);
      });
    },
  };
}
