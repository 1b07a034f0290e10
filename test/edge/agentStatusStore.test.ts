/**
 * The agent's live status store: reachability learnt from real traffic to a loopback HTTP
 * server, flips only (a repeat of the current state changes nothing and tells nobody), and
 * every reader — the tracker, the store's snapshot, the listeners of its flips — agreeing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCloudClient } from '../../edge/cloud/cloudClient.js';
import {
  createAgentStatusStore,
  type ConnectivityChange,
} from '../../edge/agent/agentStatusStore.js';
import { createConnectivity } from '../../edge/agent/connectivity.js';

let server: Server | undefined;
afterEach(async () => {
  if (server?.listening) await new Promise((r) => server!.close(r));
  server = undefined;
});

async function listen(): Promise<string> {
  server = createServer((_req, res) => {
    res.statusCode = 503; // an answer of any status is the cloud talking
    res.end('busy');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('agent status store', () => {
  it('starts offline with no observation, and tells only of flips', () => {
    const status = createAgentStatusStore();
    const flips: ConnectivityChange[] = [];
    status.on('connectivityChanged', ({ type: _, ...change }) => flips.push(change));
    expect(status.getSnapshot().context).toEqual({
      online: false,
      onlineSince: null,
      via: null,
      reason: null,
    });
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    // the first observation counts even when it confirms the offline start
    status.trigger.reachability({
      online: false,
      via: '/api/v1/x',
      reason: 'ECONNREFUSED',
      at: t(1),
    });
    status.trigger.reachability({ online: false, via: '/api/v1/y', reason: 'ETIMEDOUT', at: t(2) });
    status.trigger.reachability({ online: true, via: 'http', at: t(3) });
    status.trigger.reachability({ online: true, via: 'websocket', at: t(4) });
    expect(flips).toEqual([
      { online: false, via: '/api/v1/x', reason: 'ECONNREFUSED', at: t(1) },
      { online: true, via: 'http', at: t(3) },
    ]);
    expect(status.getSnapshot().context).toEqual({
      online: true,
      onlineSince: t(3),
      via: 'http',
      reason: null,
    });
  });

  it('is fed by the connectivity tracker from real requests', async () => {
    const base = await listen();
    const status = createAgentStatusStore();
    const heard: boolean[] = [];
    const connectivity = createConnectivity(
      createCloudClient({ baseUrl: base, deviceId: 'dev-1', secret: 'device-secret' }),
      { status, onChange: (c) => heard.push(c.online) },
    );
    const answered = await connectivity.client.request({ method: 'GET', path: '/api/v1/ping' });
    expect(answered.status).toBe(503);
    expect(status.getSnapshot().context).toMatchObject({ online: true, via: 'http' });
    expect(connectivity.isOnline()).toBe(true);
    expect(connectivity.since()).toEqual(status.getSnapshot().context.onlineSince);

    await new Promise((r) => server!.close(r));
    await expect(
      connectivity.client.request({ method: 'GET', path: '/api/v1/ping?x=1' }),
    ).rejects.toThrow();
    expect(status.getSnapshot().context).toMatchObject({ online: false, via: '/api/v1/ping' });
    expect(status.getSnapshot().context.reason).toEqual(expect.any(String));
    expect(heard).toEqual([true, false]);

    // once quiet (the agent is stopping), its own aborted requests say nothing
    connectivity.reachable('websocket');
    connectivity.quiet();
    connectivity.unreachable('/api/v1/ping', 'aborted');
    expect(connectivity.isOnline()).toBe(true);
    expect(heard).toEqual([true, false, true]);
  });
});
