/**
 * A webhook receiver for tests: a real node:http server on loopback that records every
 * request (headers and raw body) and answers with the status the test sets. It can be
 * stopped and started again on the same port, to be "down" (connection refused) for a
 * while. Tests wait on what it received, never on time.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got. */
export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

/** A running (or stopped) receiver. */
export interface WebhookReceiver {
  /** The URL to register. */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly received: ReceivedRequest[];
  /** The status answered from now on (default 204). */
  status: number;
  /** Resolves once `predicate` holds for what was received. */
  until(predicate: (received: readonly ReceivedRequest[]) => boolean): Promise<void>;
  /** Stop listening (new connections are refused). */
  stop(): Promise<void>;
  /** Listen again on the same port. */
  start(): Promise<void>;
}

/** Start a receiver on a free loopback port, at `path`. */
export async function startWebhookReceiver(path = '/hooks/saffron'): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const waiters: { predicate: (r: readonly ReceivedRequest[]) => boolean; resolve: () => void }[] =
    [];
  const check = () => {
    for (const waiter of [...waiters])
      if (waiter.predicate(received)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
  };
  let server: Server;
  let port = 0;
  const receiver: WebhookReceiver = {
    url: '',
    received,
    status: 204,
    until(predicate) {
      return new Promise((resolve) => {
        waiters.push({ predicate, resolve });
        check();
      });
    },
    stop: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
    start: () => listen(),
  };
  const listen = () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (request.url === path && request.method === 'POST')
          received.push({
            headers: request.headers,
            body,
            json: JSON.parse(body) as ReceivedRequest['json'],
          });
        response.statusCode = request.url === path ? receiver.status : 404;
        response.end();
        check();
      });
    });
    return new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  };
  await listen();
  Object.assign(receiver, { url: `http://127.0.0.1:${port}${path}` });
  return receiver;
}
