/**
 * What a client can make the gateway read before it has proven who it is, and how long it
 * may hold a connection, over raw sockets on loopback: a large unauthenticated body is
 * answered 401 while most of it is still unsent and the server reads no more than a small
 * part of it (counted on the server's own socket); a body trickled slower than the request
 * timeout is cut off, while a device's WebSocket opened before it stays up; a signed body is
 * covered byte for byte whatever its media type. Also the smaller findings: dashboard file
 * names that are members of every object, a function path into `node_modules`, and a failed
 * command's error text quoting the device's disk.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCommandExecutor } from '../../edge/commands/commandExecutor.js';
import { deviceAuthHeaders } from '../../gateway/index.js';
import { MAX_WASM_UPLOAD_BYTES } from '../../gateway/routes/wasmComponents.js';
import { loadDefinition, resolveStepFunction } from '../../runtime/index.js';
import { connectDevice } from '../support/device.js';
import { openEdgeStore } from '../support/edgeComponents.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const dialect = CLOUD_DIALECTS[0]!;

/** An HTTP answer read off a raw socket. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parse one HTTP/1.1 answer from `text`, or undefined while it is incomplete. */
function parseAnswer(text: string): RawAnswer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = text.slice(end + 4);
  if (Buffer.byteLength(body) < length) return undefined;
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

/** The server side of each connection, by the client's port, to count what it read. */
function serverSockets(gw: TestGateway): Map<number, Socket> {
  const sockets = new Map<number, Socket>();
  gw.gateway.app.server.on('connection', (socket: Socket) =>
    sockets.set(socket.remotePort!, socket),
  );
  return sockets;
}

/**
 * Send `head` and the first `sendFirst` bytes of a body of `length`, wait for the answer,
 * then try to send the rest. Resolves once both ends are closed, with the answer, how much of
 * the body was sent when it came, and how many bytes the server's socket read in all.
 */
async function oversizedRequest(
  gw: TestGateway,
  sockets: Map<number, Socket>,
  head: string,
  length: number,
  sendFirst = 64 * 1024,
): Promise<{ answer: RawAnswer; sentWhenAnswered: number; serverRead: number }> {
  const { port } = new URL(gw.url);
  const client = connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  const server = sockets.get(client.localPort!)!;
  const serverClosed = new Promise((resolve) => server.once('close', resolve));
  const clientClosed = new Promise((resolve) => client.once('close', resolve));
  client.on('error', () => undefined); // the server closes while the rest is being sent
  let text = '';
  let sent = 0;
  const answered = new Promise<RawAnswer>((resolve) =>
    client.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const answer = parseAnswer(text);
      if (answer) resolve(answer);
    }),
  );
  client.write(head);
  client.write(Buffer.alloc(sendFirst, 0x20));
  sent = sendFirst;
  const answer = await answered;
  const sentWhenAnswered = sent;
  client.write(Buffer.alloc(length - sendFirst, 0x20));
  await Promise.all([serverClosed, clientClosed]);
  return { answer, sentWhenAnswered, serverRead: server.bytesRead };
}

const requestHead = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

describe('request bodies and timeouts', () => {
  let gw: TestGateway;
  let sockets: Map<number, Socket>;
  let deviceSecret: string;
  beforeAll(async () => {
    gw = await startTestGateway(dialect);
    sockets = serverSockets(gw);
    deviceSecret = await gw.insertDevice('limits-1');
  });
  afterAll(async () => {
    await gw.close();
  });

  it('answers an unauthenticated large body 401 before reading it, and closes the connection', async () => {
    const eightMiB = 8 * 1024 * 1024;
    const cases: { path: string; length: number; headers: Record<string, string> }[] = [
      // no credentials, on a JSON route and on the 16 MiB WASM upload
      { path: '/api/v1/workflows', length: eightMiB, headers: {} },
      { path: '/api/v1/wasm-components', length: MAX_WASM_UPLOAD_BYTES, headers: {} },
      // an unknown token
      {
        path: '/api/v1/wasm-components',
        length: MAX_WASM_UPLOAD_BYTES,
        headers: { authorization: `Bearer saf_${'x'.repeat(43)}` },
      },
      // a well-formed device header naming no device
      {
        path: '/api/v1/transactions/batch',
        length: eightMiB,
        headers: {
          ...deviceAuthHeaders('no-such-device', 'whatever', {
            method: 'POST',
            pathWithQuery: '/api/v1/transactions/batch',
            body: '',
          }),
        },
      },
    ];
    for (const { path, length, headers } of cases) {
      const head = requestHead('POST', path, {
        'content-type': 'application/json',
        'content-length': String(length),
        ...headers,
      });
      const { answer, sentWhenAnswered, serverRead } = await oversizedRequest(
        gw,
        sockets,
        head,
        length,
      );
      expect(answer.status, path).toBe(401);
      expect(answer.headers['content-type']).toContain('application/problem+json');
      expect(answer.headers.connection).toBe('close');
      // answered with less than 1% of the body sent; the server read a bounded amount of it
      expect(sentWhenAnswered).toBeLessThan(length / 100);
      expect(serverRead).toBeLessThan(1024 * 1024);
    }
  });

  it('answers a large body to an unknown route 404, and to a public route 413, unread', async () => {
    const length = 8 * 1024 * 1024;
    for (const [path, status] of [
      ['/api/v1/no-such-route', 404],
      ['/api/v1/devices/register', 413],
    ] as const) {
      const head = requestHead('POST', path, {
        'content-type': 'application/json',
        'content-length': String(length),
      });
      const { answer, serverRead } = await oversizedRequest(gw, sockets, head, length);
      expect(answer.status, path).toBe(status);
      expect(answer.headers.connection).toBe('close');
      expect(serverRead).toBeLessThan(1024 * 1024);
    }
  });

  it('covers a signed body byte for byte whatever its media type', async () => {
    const path = `/api/v1/devices/limits-1/commands/${randomUUID()}/ack`;
    const bytes = Buffer.from('{"status":"EXECUTED"}\u0000binary tail');
    const signed = deviceAuthHeaders('limits-1', deviceSecret, {
      method: 'POST',
      pathWithQuery: path,
      body: bytes,
    });
    const send = (body: Uint8Array, contentType: string, headers = signed) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': contentType },
        body,
      });
    // the exact bytes are accepted as signed (then refused as an ack body: not 401)
    const intact = await send(bytes, 'application/octet-stream');
    expect(intact.status).not.toBe(401);
    expect(intact.status).toBeLessThan(500);
    // one byte changed: the signature no longer holds
    const altered = Buffer.from(bytes);
    altered.writeUInt8(altered.readUInt8(altered.length - 1) ^ 1, altered.length - 1);
    const tampered = await send(altered, 'application/octet-stream');
    expect(tampered.status).toBe(401);
    expect(((await tampered.json()) as { code: string }).code).toBe('INVALID_SIGNATURE');
    // a media type whose bytes the gateway does not keep cannot be verified: 415
    const fresh = () =>
      deviceAuthHeaders('limits-1', deviceSecret, {
        method: 'POST',
        pathWithQuery: path,
        body: bytes,
      });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await send(bytes, type, fresh());
      expect(res.status, type).toBe(415);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    // a GET carrying a body: fastify would never read it, so the signature could not cover it
    const get = '/api/v1/devices/limits-1/config';
    const head = requestHead('GET', get, {
      ...deviceAuthHeaders('limits-1', deviceSecret, {
        method: 'GET',
        pathWithQuery: get,
        body: '',
      }),
      'content-type': 'application/json',
      'content-length': '2',
    });
    const { answer } = await oversizedRequest(gw, sockets, head, 2, 2);
    expect(answer.status).toBe(415);
  });

  it('answers dashboard names that are members of every object 404, with no path in the body', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await fetch(`${gw.url}/dashboard/${name}`);
      expect(res.status, name).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const text = await res.text();
      expect(text).not.toContain(process.cwd());
      expect(text).not.toMatch(/\/(?:home|srv|tmp|work|usr)\//);
    }
    expect((await fetch(`${gw.url}/dashboard/app.js`)).status).toBe(200);
  });
});

describe('server timeouts', () => {
  let gw: TestGateway;
  let token: string;
  beforeAll(async () => {
    gw = await startTestGateway(dialect, {
      timeouts: { requestMs: 600, headersMs: 400, idleMs: 60_000 },
    });
    token = gw.adminToken;
  });
  afterAll(async () => {
    await gw.close();
  });

  it('cuts off a body trickled slower than the request timeout; an open device socket stays up', async () => {
    const secret = await gw.insertDevice('timeouts-1');
    const device = await connectDevice(gw.url, 'timeouts-1', secret);
    await device.challenge;
    device.send({ type: 'hello' });
    expect(await device.next('welcome')).toMatchObject({ type: 'welcome' });

    const { port } = new URL(gw.url);
    const loris = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => loris.once('connect', resolve));
    const closed = new Promise((resolve) => loris.once('close', resolve));
    loris.on('error', () => undefined);
    let text = '';
    loris.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    loris.write(
      requestHead('POST', '/api/v1/workflows', {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': '100000',
      }),
    );
    // one byte at a time, more often than any idle timeout, never finishing
    const trickle = setInterval(() => loris.write(' '), 50);
    await closed;
    clearInterval(trickle);
    expect(parseAnswer(text)?.status).toBe(408);

    // the socket opened before the trickle outlived the request timeout and still works
    expect(device.ws.readyState).toBe(device.ws.OPEN);
    device.send({ type: 'heartbeat' });
    device.ws.ping();
    await new Promise((resolve) => device.ws.once('pong', resolve));
    await device.close();
  });

  it('cuts off headers that never end', async () => {
    const { port } = new URL(gw.url);
    const slow = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => slow.once('connect', resolve));
    const closed = new Promise((resolve) => slow.once('close', resolve));
    slow.on('error', () => undefined);
    slow.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n');
    const trickle = setInterval(() => slow.write('x-slow: 1\r\n'), 50);
    await closed;
    clearInterval(trickle);
  });

  it('refuses out-of-range timeouts', async () => {
    const { createGateway } = await import('../../gateway/index.js');
    await expect(
      createGateway({ store: gw.handle.store, keys: gw.keys, timeouts: { headersMs: 0 } }),
    ).rejects.toThrow(/positive integer/);
    await expect(
      createGateway({
        store: gw.handle.store,
        keys: gw.keys,
        timeouts: { requestMs: 1000, headersMs: 2000 },
      }),
    ).rejects.toThrow(/headersMs must not exceed/);
  });
});

describe('function paths and device error texts', () => {
  it('refuses a function path into node_modules, directly or through a symlink', async () => {
    const root = mkdtempSync(join(tmpdir(), 'saffron-steps-'));
    mkdirSync(join(root, 'node_modules', 'pkg'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'pkg', 'index.js'), 'export const run = () => 1;\n');
    mkdirSync(join(root, 'lib'));
    symlinkSync(join(root, 'node_modules', 'pkg'), join(root, 'lib', 'linked'));
    writeFileSync(join(root, 'ok.js'), 'export const run = () => 2;\n');
    for (const functionPath of [
      'node_modules.pkg.index.run',
      './node_modules/pkg/index.js#run',
      'lib.linked.index.run',
      './lib/linked/index.js#run',
    ]) {
      await expect(resolveStepFunction(functionPath, root), functionPath).rejects.toMatchObject({
        code: 'FUNCTION_PATH_INVALID',
        message: expect.stringContaining('node_modules') as unknown,
      });
    }
    await expect(resolveStepFunction('./../outside.js#run', root)).rejects.toMatchObject({
      code: 'FUNCTION_PATH_INVALID',
    });
    const { fn } = await resolveStepFunction('ok.run', root);
    expect((fn as () => number)()).toBe(2);
    // through a definition: a validation error on the step
    const yaml =
      'workflow_type: T\nsteps: [{name: s, type: STANDARD, function: node_modules.pkg.index.run}]\n';
    await expect(loadDefinition(yaml, { stepsRoot: root })).rejects.toMatchObject({
      code: 'DEFINITION_INVALID',
      message: expect.stringContaining('node_modules') as unknown,
    });
  });

  it("keeps the device's absolute paths out of a failed command's ack", async () => {
    const root = mkdtempSync(join(tmpdir(), 'saffron-steps-'));
    const edge = await openEdgeStore();
    try {
      const executor = createCommandExecutor({
        store: edge.store,
        // signatures are another test's concern (trustedChannel.test.ts): this one is the ack text
        verify: () => undefined,
        handlers: {
          // installing a definition whose step module is missing fails with the root's path
          UPDATE_WORKFLOW: async () => {
            await loadDefinition(
              'workflow_type: T\nsteps: [{name: s, type: STANDARD, function: payments.checks.floor_limit}]\n',
              { stepsRoot: root },
            );
          },
        },
      });
      const { ack } = await executor.run(
        {
          command_id: randomUUID(),
          command_type: 'UPDATE_WORKFLOW',
          payload: {},
        },
        new AbortController().signal,
      );
      expect(ack.status).toBe('FAILED');
      expect(ack.error).toContain('payments.checks.floor_limit');
      expect(ack.error).not.toContain(root);
      expect(ack.error).not.toContain(tmpdir());
    } finally {
      await edge.close();
    }
  });
});
