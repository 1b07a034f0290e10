/** A Stately-inspector stand-in for tests: a `ws` server on loopback that keeps every frame. */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { InspectionMessage } from '../../actors/index.js';

/** A running endpoint. */
export interface InspectEndpoint {
  url: string;
  port: number;
  /** Every message received, in arrival order. */
  messages: InspectionMessage[];
  /** Connections accepted so far. */
  connections: number;
  /** Resolves once `check` holds for the messages received (checked on every new frame). */
  until(check: (messages: InspectionMessage[]) => boolean, what: string): Promise<void>;
  close(): Promise<void>;
}

/** Listen on 127.0.0.1 (`port` 0 picks a free one). */
export async function startInspectEndpoint(port = 0): Promise<InspectEndpoint> {
  const server = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const bound = (server.address() as AddressInfo).port;
  const waiters = new Set<() => void>();
  const endpoint: InspectEndpoint = {
    url: `ws://127.0.0.1:${bound}`,
    port: bound,
    messages: [],
    connections: 0,
    until(check, what) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(test);
          reject(
            new Error(
              `inspector never saw ${what}; got ${JSON.stringify(endpoint.messages.map((m) => m.type))}`,
            ),
          );
        }, 20_000);
        const test = () => {
          if (!check(endpoint.messages)) return;
          clearTimeout(timer);
          waiters.delete(test);
          resolve();
        };
        waiters.add(test);
        test();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
  server.on('connection', (socket) => {
    endpoint.connections++;
    for (const w of [...waiters]) w();
    socket.on('message', (data: Buffer) => {
      endpoint.messages.push(JSON.parse(data.toString()) as InspectionMessage);
      for (const w of [...waiters]) w();
    });
  });
  return endpoint;
}
