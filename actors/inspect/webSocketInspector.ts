/**
 * A WebSocket client of Stately's inspector: sends each inspection message as one JSON text
 * frame to a `ws://` or `wss://` URL (an `@statelyai/inspect` WebSocket server, or anything
 * that relays its frames to the inspector).
 *
 * It must never slow the engine down nor fail it. Messages wait in a bounded buffer while the
 * socket connects or is slow — past `maxBuffered`, the oldest are dropped and counted — and at
 * most `maxInFlight` sent frames wait for the socket to take them. A socket that closes or
 * fails is opened again after a back-off that doubles up to `maxBackoffMs`, with jitter, so a
 * fleet of nodes does not reconnect in step. Timers are unref'd: an idle inspector never keeps
 * a process alive.
 */
import WebSocket from 'ws';
import { parseInspectUrl } from './inspectUrl.js';
import type { InspectionMessage } from './protocol.js';

/** Options of {@link createWebSocketInspector}. */
export interface WebSocketInspectorOptions {
  /** Most messages kept while the socket is down or slow (default 1,000); the oldest go first. */
  maxBuffered?: number;
  /** Most frames handed to the socket and not yet written (default 64). */
  maxInFlight?: number;
  /** First reconnect delay (default 250 ms), doubled after each failure. */
  minBackoffMs?: number;
  /** Longest reconnect delay (default 30 s). */
  maxBackoffMs?: number;
  /** Random source of the jitter (default Math.random). */
  random?: () => number;
  /** Told when the connection opens or closes (for a log line; must not throw). */
  onStatus?: (status: 'open' | 'closed', detail?: string) => void;
}

/** A running client: an observer of inspection messages. */
export interface WebSocketInspector {
  next(message: InspectionMessage): void;
  /** Messages dropped so far because the buffer was full. */
  readonly dropped: number;
  /** Messages waiting to be sent. */
  readonly buffered: number;
  /** Whether the socket is open now. */
  readonly connected: boolean;
  /**
   * Stop reconnecting, send what is buffered when the socket is open (waiting at most
   * `timeoutMs`, default 1 s), then close it.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Connect to `url` (validated: `ws://` or `wss://`) and return the client. */
export function createWebSocketInspector(
  url: string | URL,
  options: WebSocketInspectorOptions = {},
): WebSocketInspector {
  const target = parseInspectUrl(url);
  const maxBuffered = options.maxBuffered ?? 1000;
  const maxInFlight = options.maxInFlight ?? 64;
  const minBackoff = options.minBackoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  const random = options.random ?? Math.random;
  const queue: string[] = [];
  let dropped = 0;
  let inFlight = 0;
  let failures = 0;
  let socket: WebSocket | undefined;
  let open = false;
  let closing = false;
  let retry: NodeJS.Timeout | undefined;
  let idle: (() => void) | undefined;

  const status = (s: 'open' | 'closed', detail?: string) => {
    try {
      options.onStatus?.(s, detail);
    } catch {
      // a status line never fails the client
    }
  };

  const pump = () => {
    while (open && socket && inFlight < maxInFlight && queue.length > 0) {
      const frame = queue.shift()!;
      inFlight++;
      socket.send(frame, () => {
        inFlight--;
        pump();
      });
    }
    if (queue.length === 0 && inFlight === 0) idle?.();
  };

  const connect = () => {
    retry = undefined;
    if (closing) return;
    const ws = new WebSocket(target);
    socket = ws;
    ws.on('open', () => {
      open = true;
      failures = 0;
      status('open');
      pump();
    });
    ws.on('error', () => {
      // 'close' follows and schedules the reconnect
    });
    ws.on('close', (code) => {
      const was = open;
      open = false;
      inFlight = 0;
      if (socket === ws) socket = undefined;
      if (was) status('closed', `code ${code}`);
      if (closing) {
        idle?.();
        return;
      }
      const delay = Math.min(maxBackoff, minBackoff * 2 ** failures++);
      retry = setTimeout(connect, Math.round(delay * (0.5 + random() / 2)));
      retry.unref();
    });
  };
  connect();

  return {
    next(message) {
      if (closing) return;
      queue.push(JSON.stringify(message));
      if (queue.length > maxBuffered) {
        queue.shift();
        dropped++;
      }
      pump();
    },
    get dropped() {
      return dropped;
    },
    get buffered() {
      return queue.length;
    },
    get connected() {
      return open;
    },
    async close(timeoutMs = 1000) {
      if (retry) clearTimeout(retry);
      retry = undefined;
      if (open && (queue.length > 0 || inFlight > 0)) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          idle = resolve;
          timer = setTimeout(resolve, timeoutMs);
          timer.unref();
          pump();
        });
        clearTimeout(timer);
      }
      closing = true;
      const ws = socket;
      if (!ws || ws.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          ws.terminate();
          resolve();
        }, timeoutMs);
        timer.unref();
        ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else ws.close(1000);
      });
    },
  };
}
