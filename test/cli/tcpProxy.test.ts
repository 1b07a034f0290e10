/**
 * The network-cutting proxy of the demo and the chaos run: traffic flows, a cut resets open
 * connections and refuses new ones, a restore lets traffic flow again, latency delays.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../bin/demo/tcpProxy.js';

describe('tcp proxy', () => {
  let server: Server;
  let proxy: TcpProxy;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    proxy = await startTcpProxy({ host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('forwards, cuts, restores and delays', async () => {
    const ping = () =>
      fetch(`${proxy.url}/`, { headers: { connection: 'close' } }).then((r) => r.text());
    expect(await ping()).toBe('pong');
    proxy.cut();
    expect(proxy.up).toBe(false);
    await expect(ping()).rejects.toThrow();
    proxy.restore();
    expect(await ping()).toBe('pong');
    proxy.latencyMs = 150;
    const started = performance.now();
    expect(await ping()).toBe('pong');
    // at least one delayed chunk each way
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    proxy.latencyMs = 0;
  });
});
