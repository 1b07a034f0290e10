/**
 * A device's side of the protocol for tests: signed SAF records, the signed WebSocket
 * upgrade (without a nonce, its socket answering the gateway's challenge — or the
 * deprecated nonce upgrade where a test is about it), a frame reader that waits on frames
 * (never on time), and a settable clock.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { deviceAuthHeaders, deviceUpgradeHeaders, signSocketProof } from '../../gateway/index.js';
import { signTransactionRecord } from '../../runtime/index.js';

/** A clock tests move by hand. */
export interface TestClock {
  now: () => Date;
  advance: (ms: number) => void;
}

/** A clock starting at the real time, moved only by `advance`. */
export function testClock(): TestClock {
  let at = Date.now();
  return { now: () => new Date(at), advance: (ms) => void (at += ms) };
}

/** A signed transaction record of `deviceId` with `fields` over sensible defaults. */
export function signedRecord(
  deviceId: string,
  secret: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  const record: Record<string, unknown> = {
    workflow_id: randomUUID(),
    device_id: deviceId,
    workflow_type: 'payment_authorization',
    workflow_version: '1',
    device_sequence: 1,
    amount_minor: 1250,
    currency: 'EUR',
    card: {
      token: 'tok_8f2a',
      last4: '4242',
      encrypted_payload: Buffer.alloc(48, 7).toString('base64'),
    },
    final_state: { approved: true, approval_code: 'OFFLINE-A1' },
    created_at: '2025-03-01T10:00:00Z',
    completed_at: '2025-03-01T10:00:02.5Z',
    ...fields,
  };
  return { ...record, signature: signTransactionRecord(secret, record) };
}

/**
 * `text` with the values a test generates at random (UUIDs, hex signatures) replaced, so
 * that a check for leaked card digits cannot match "4111" inside a random id.
 */
export function withoutRandomIds(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b[0-9a-f]{32,}\b/gi, '<hex>');
}

/** A frame as the server sends it. */
export type Frame = Record<string, unknown> & { type: string };

/** An open device socket. */
export interface DeviceSocket {
  ws: WebSocket;
  /**
   * The socket's challenge (the gateway's first frame; kept out of {@link next}). Never
   * resolves on a socket opened the deprecated way.
   */
  challenge: Promise<string>;
  /** The next frame of `type` (heartbeats are skipped unless asked for). */
  next(type?: string): Promise<Frame>;
  /**
   * Send a frame. A `hello` without a `proof` on a challenged socket is sent once the
   * challenge is in, with its proof (pass `proof` — even `undefined` — to send it as is).
   */
  send(frame: unknown): void;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

const wsUrl = (base: string, path: string) => `${base.replace(/^http/, 'ws')}${path}`;

/** Signed upgrade headers of `deviceId` for its socket path (no nonce: the socket is challenged). */
export function socketHeaders(
  deviceId: string,
  secret: string,
  path = `/api/v1/devices/${deviceId}/ws`,
  now = new Date(),
): Record<string, string> {
  return deviceUpgradeHeaders(deviceId, secret, {
    pathWithQuery: path,
    timestamp: now.toISOString(),
  });
}

/** Upgrade headers of the deprecated scheme: signed with an `X-Saffron-Nonce`, not challenged. */
export function legacySocketHeaders(
  deviceId: string,
  secret: string,
  path = `/api/v1/devices/${deviceId}/ws`,
  now = new Date(),
): Record<string, string> {
  return deviceAuthHeaders(deviceId, secret, {
    method: 'GET',
    pathWithQuery: path,
    body: '',
    timestamp: now.toISOString(),
  });
}

/** How {@link connectDevice} opens the socket. */
export interface ConnectOptions {
  /** Upgrade headers to send as they are (a captured upgrade, the deprecated scheme). */
  headers?: Record<string, string>;
  /** Open it the deprecated way (a fresh nonce, no challenge). */
  legacy?: boolean;
}

/** Open `deviceId`'s socket on the gateway at `base`. */
export function connectDevice(
  base: string,
  deviceId: string,
  secret: string,
  now = new Date(),
  options: ConnectOptions = {},
): Promise<DeviceSocket> {
  const path = `/api/v1/devices/${deviceId}/ws`;
  const headers =
    options.headers ??
    (options.legacy ? legacySocketHeaders : socketHeaders)(deviceId, secret, path, now);
  const ws = new WebSocket(wsUrl(base, path), { headers });
  let resolveChallenge!: (challenge: string) => void;
  const challenge = new Promise<string>((resolve) => (resolveChallenge = resolve));
  let challenged: string | undefined;
  const sendNow = (frame: unknown) => ws.send(JSON.stringify(frame));
  const frames: Frame[] = [];
  const waiters: { type: string | undefined; resolve: (f: Frame) => void }[] = [];
  const matches = (frame: Frame, type: string | undefined) =>
    type === undefined ? frame.type !== 'heartbeat' : frame.type === type;
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as Frame;
    if (frame.type === 'challenge' && typeof frame.challenge === 'string') {
      challenged = frame.challenge;
      return resolveChallenge(frame.challenge);
    }
    const waiter = waiters.findIndex((w) => matches(frame, w.type));
    if (waiter >= 0) waiters.splice(waiter, 1)[0]!.resolve(frame);
    else frames.push(frame);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return new Promise((resolve, reject) => {
    ws.on('unexpected-response', (request, response) => {
      request.destroy();
      reject(new Error(`upgrade refused: ${response.statusCode}`));
    });
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        ws,
        challenge,
        closed,
        next(type) {
          const i = frames.findIndex((f) => matches(f, type));
          if (i >= 0) return Promise.resolve(frames.splice(i, 1)[0]!);
          return new Promise((resolve) => waiters.push({ type, resolve }));
        },
        send(frame) {
          const f = frame as Frame;
          if (f.type !== 'hello' || 'proof' in f) return sendNow(frame);
          // the deprecated upgrade gets no challenge: its hello goes out at once
          if (headers['x-saffron-nonce'] !== undefined) return sendNow(frame);
          const prove = (c: string) =>
            sendNow({ ...f, proof: signSocketProof(secret, deviceId, c) });
          if (challenged !== undefined) prove(challenged);
          else void challenge.then(prove);
        },
        async close() {
          if (ws.readyState !== WebSocket.CLOSED) ws.close();
          await closed;
        },
      }),
    );
  });
}

/** The HTTP status and problem body of an upgrade the gateway refuses. */
export function refusedUpgrade(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}> {
  const ws = new WebSocket(wsUrl(base, path), { headers });
  return new Promise((resolve, reject) => {
    ws.on('open', () => {
      ws.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    ws.on('error', () => undefined);
    ws.on('unexpected-response', (request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      response.on('end', () => {
        request.destroy();
        resolve({
          status: response.statusCode ?? 0,
          body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          headers: response.headers,
        });
      });
    });
  });
}
