/**
 * An HTTP proxy on loopback between an edge agent process and its cloud, for end-to-end tests
 * of what a real network does to the agent: forwards requests and WebSocket upgrades to the
 * current cloud (which may be restarted on another port), drops every connection while the
 * cloud is down or the link is `cut`, and can alter answers on the way — a configuration
 * whose signature was tampered with, a WASM download with a flipped byte — so the agent's
 * own checks are what is tested.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

/** A running proxy. */
export interface EdgeProxy {
  /** The URL to give the agent as its cloud. */
  readonly url: string;
  /** Forward to `target` (a cloud base URL), or drop everything while undefined. */
  setTarget(target: string | undefined): void;
  /** Drop open connections and refuse new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** Flip a character of the signature of device configuration documents (200 answers). */
  tamperConfig: boolean;
  /** Flip the last byte of WASM downloads. */
  corruptWasm: boolean;
  /** Requests seen, by path without query (for assertions on what the agent asked). */
  readonly seen: string[];
  close(): Promise<void>;
}

const CONFIG_PATH = /^\/api\/v1\/devices\/[^/]+\/config$/;
const WASM_PATH = /^\/api\/v1\/wasm-components\/[0-9a-f]{64}\/download$/;

/** Start a proxy with no target yet (the cloud is down). */
export async function startEdgeProxy(): Promise<EdgeProxy> {
  let target: URL | undefined;
  let up = true;
  const sockets = new Set<Socket>();
  const seen: string[] = [];
  const state = { tamperConfig: false, corruptWasm: false };

  const drop = (socket: Socket) => socket.destroy();

  const alter = (path: string, body: Buffer): Buffer => {
    if (state.tamperConfig && CONFIG_PATH.test(path)) {
      const doc = JSON.parse(body.toString('utf8')) as { signature: string };
      const last = doc.signature.at(-2) === 'A' ? 'B' : 'A';
      doc.signature = `${doc.signature.slice(0, -2)}${last}${doc.signature.slice(-1)}`;
      return Buffer.from(JSON.stringify(doc));
    }
    if (state.corruptWasm && WASM_PATH.test(path)) {
      const copy = Buffer.from(body);
      copy[copy.length - 1] = copy[copy.length - 1]! ^ 0x01;
      return copy;
    }
    return body;
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    seen.push(path);
    if (!up || !target) return drop(req.socket);
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer: IncomingMessage) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          if (!up) return drop(req.socket);
          const body =
            answer.statusCode === 200 ? alter(path, Buffer.concat(chunks)) : Buffer.concat(chunks);
          const headers = { ...answer.headers, 'content-length': String(body.length) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(body);
        });
        answer.on('error', () => drop(req.socket));
      },
    );
    upstream.on('error', () => drop(req.socket)); // cloud down: the agent sees a dead network
    req.pipe(upstream);
  });
  server.on('connection', (socket: Socket) => {
    if (!up) return drop(socket);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    seen.push((req.url ?? '/').split('?')[0]!);
    if (!up || !target) return drop(socket);
    const upstream = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      socket.destroy();
    });
    socket.on('close', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    setTarget(next) {
      target = next === undefined ? undefined : new URL(next);
      if (!target) dropAll();
    },
    cut() {
      up = false;
      dropAll();
    },
    restore() {
      up = true;
    },
    get tamperConfig() {
      return state.tamperConfig;
    },
    set tamperConfig(value) {
      state.tamperConfig = value;
    },
    get corruptWasm() {
      return state.corruptWasm;
    },
    set corruptWasm(value) {
      state.corruptWasm = value;
    },
    seen,
    async close() {
      dropAll();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
