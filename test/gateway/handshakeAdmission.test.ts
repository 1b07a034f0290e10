/**
 * Admission of device socket handshakes: a gateway carries at most `maxPendingHandshakes`
 * handshakes at once — from the upgrade until its socket has proven itself (the connect is
 * then written behind, link/presence.ts). The test holds one handshake open (its device not
 * yet answering the challenge), so the next device's upgrade meets a full gateway: 503
 * GATEWAY_BUSY with a Retry-After and no database work; the edge agent's socket link waits
 * that long before it tries again, without counting the refusal as a failure. Once the first handshake completes,
 * devices get in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSocketLink } from '../../edge/commands/socketLink.js';
import { createCloudClient, systemTimers } from '../../edge/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { connectDevice, refusedUpgrade, socketHeaders } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const QUIET = { heartbeatIntervalMs: 3_600_000, sweepIntervalMs: 3_600_000 };

describe.each(CLOUD_DIALECTS)('device handshake admission ($name)', (dialect) => {
  let gw: TestGateway;
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    gw = await startTestGateway(dialect, {
      routes: [commandRoutes({ ...QUIET, maxPendingHandshakes: 1 })],
    });
    for (const id of ['hs-1', 'hs-2', 'hs-3']) secrets[id] = await gw.insertDevice(id);
  });
  afterAll(async () => {
    await gw.close();
  });

  const refusedTotal = async () => {
    const res = await gw.asUser(gw.adminToken, '/metrics');
    const line = (await res.text())
      .split('\n')
      .find((l) => l.startsWith('saffron_device_handshakes_refused_total '));
    return Number(line?.split(' ')[1] ?? NaN);
  };

  it('answers 503 with Retry-After while the gateway is full, then lets devices in', async () => {
    // hs-1's upgrade succeeds, but it has not proven itself: it holds the slot
    const first = await connectDevice(gw.url, 'hs-1', secrets['hs-1']!);
    const path = '/api/v1/devices/hs-2/ws';
    const busy = await refusedUpgrade(gw.url, path, socketHeaders('hs-2', secrets['hs-2']!));
    expect(busy).toMatchObject({ status: 503, body: { code: 'GATEWAY_BUSY' } });
    const retryAfter = Number(busy.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(5);
    expect(await refusedTotal()).toBe(1);

    // the agent's socket link waits at least what the gateway asked, not its own short backoff
    const downs: number[] = [];
    const link = createSocketLink({
      cloud: createCloudClient({ baseUrl: gw.url, deviceId: 'hs-3', secret: secrets['hs-3']! }),
      timers: systemTimers,
      now: () => new Date(),
      random: () => 0,
      reconnect: { baseMs: 10, maxMs: 10 },
      connectTimeoutMs: 5_000,
      ackTimeoutMs: 5_000,
      heartbeatIntervalMs: 3_600_000,
      onUp: () => undefined,
      onDown: (info) => downs.push(info.retryInMs),
      onCommand: () => undefined,
      onInvalid: () => undefined,
    });
    link.start();
    await expect.poll(() => downs.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    // a refusal by admission is not a failure: each wait is what the gateway asked (at least
    // a second, plus the agent's own random part — 0 here), never a growing backoff
    expect(downs[0]).toBeGreaterThanOrEqual(1_000);
    expect(downs[1]).toBeGreaterThanOrEqual(1_000);
    expect(link.failures()).toBe(0);
    await link.stop();

    // the held handshake completes; the slot is free again
    first.send({ type: 'hello' });
    await first.next('welcome');
    const second = await connectDevice(gw.url, 'hs-2', secrets['hs-2']!);
    second.send({ type: 'hello' });
    expect(await second.next('welcome')).toMatchObject({ type: 'welcome' });
    await first.close();
    await second.close();
  });
});
