/**
 * A TCP proxy that cuts the network on demand, for the demo and the chaos run: devices talk
 * to the cloud through it, and `cut()` makes their world go dark the way a pulled cable
 * does — open connections reset, new ones refused — while `restore()` brings it back.
 * `latencyMs` delays every chunk in both directions (a slow link), keeping order.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** `http://127.0.0.1:<port>`: the address devices use instead of the cloud's. */
  readonly url: string;
  readonly port: number;
  /** Whether traffic flows. */
  readonly up: boolean;
  /** Reset every open connection and refuse new ones. */
  cut(): void;
  /** Let traffic flow again. */
  restore(): void;
  /** Reset every open connection but keep accepting (a flapping link). */
  reset(): void;
  /** Delay each chunk by this many milliseconds (0 = none). */
  latencyMs: number;
  /** Connections currently open. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Proxy `127.0.0.1:<any port>` to `target` (host:port). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let up = true;
  const open = new Set<Socket>();
  const pair = new Map<Socket, Socket>();

  // One direction of a connection. A delayed chunk pauses its source until written, so at most
  // one is in flight, and the half-close waits for it: `end` never overtakes data.
  const forward = (from: Socket, to: Socket, proxy: TcpProxy) => {
    let inFlight = false;
    let ended = false;
    const passEnd = () => {
      if (ended && !inFlight && !to.destroyed) to.end();
    };
    from.on('data', (chunk: Buffer) => {
      if (proxy.latencyMs <= 0) {
        if (!to.write(chunk)) from.pause();
        return;
      }
      inFlight = true;
      from.pause();
      setTimeout(() => {
        inFlight = false;
        if (!to.destroyed && to.writable) to.write(chunk);
        from.resume();
        passEnd();
      }, proxy.latencyMs);
    });
    from.on('end', () => {
      ended = true;
      passEnd();
    });
    to.on('drain', () => from.resume());
  };

  const kill = (socket: Socket) => {
    socket.resetAndDestroy();
    const other = pair.get(socket);
    if (other && !other.destroyed) other.resetAndDestroy();
  };

  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    if (!up) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ port: target.port, host: target.host, allowHalfOpen: true });
    open.add(client);
    pair.set(client, upstream);
    pair.set(upstream, client);
    const forget = () => {
      open.delete(client);
      pair.delete(client);
      pair.delete(upstream);
    };
    const fail = () => {
      forget();
      client.destroy();
      upstream.destroy();
    };
    client.on('error', fail).on('close', forget);
    upstream.on('error', fail).on('close', forget);
    forward(client, upstream, proxy);
    forward(upstream, client, proxy);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;

  const proxy: TcpProxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    get up() {
      return up;
    },
    latencyMs: 0,
    cut() {
      up = false;
      for (const socket of [...open]) kill(socket);
    },
    restore() {
      up = true;
    },
    reset() {
      for (const socket of [...open]) kill(socket);
    },
    get connections() {
      return open.size;
    },
    close() {
      up = false;
      for (const socket of [...open]) kill(socket);
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
