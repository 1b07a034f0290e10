/**
 * The chaos run's webhook receiver: a local HTTP endpoint the gateways deliver to, which
 * checks each request's signature with the secret its registration returned and keeps what
 * arrived (event id, kind, data, how many times). It always answers 200 — the faults of the
 * run are the gateways dying mid-delivery and PostgreSQL restarting, not the receiver — so
 * an event that never arrives is one the system lost.
 */
import { createServer, type Server } from 'node:http';
import { verifyWebhookSignature, WEBHOOK_HEADERS } from '../../gateway/index.js';

/** An event as the receiver got it. */
export interface ReceivedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  webhookId: string;
  /** Requests that carried it (a redelivery after a lost answer is a legitimate repeat). */
  deliveries: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  url: string;
  /** Secrets by webhook id (set once each registration is created). */
  secrets: Map<string, string>;
  /** Events by `<webhook id>:<event id>`. */
  events: Map<string, ReceivedEvent>;
  /** Requests refused for a bad or missing signature. */
  readonly badSignatures: number;
  close(): Promise<void>;
}

/** Start the receiver on a free port. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secrets = new Map<string, string>();
  const events = new Map<string, ReceivedEvent>();
  let badSignatures = 0;
  const header = (value: string | string[] | undefined) =>
    Array.isArray(value) ? value[0] : value;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const webhookId = header(req.headers[WEBHOOK_HEADERS.webhookId]) ?? '';
      const secret = secrets.get(webhookId);
      const authentic =
        secret !== undefined &&
        verifyWebhookSignature({
          secret,
          body,
          timestamp: header(req.headers[WEBHOOK_HEADERS.timestamp]),
          signature: header(req.headers[WEBHOOK_HEADERS.signature]),
        });
      if (!authentic) {
        badSignatures++;
        res.writeHead(401).end();
        return;
      }
      const envelope = JSON.parse(body) as {
        id: string;
        type: string;
        data: Record<string, unknown>;
      };
      const key = `${webhookId}:${envelope.id}`;
      const seen = events.get(key);
      if (seen) seen.deliveries++;
      else events.set(key, { ...envelope, webhookId, deliveries: 1 });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    secrets,
    events,
    get badSignatures() {
      return badSignatures;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
