/**
 * What an idle device session keeps alive: not the HTTP request of its upgrade (about 3 KB
 * with its headers, were the socket or the session to keep it; gateway/routes/deviceSocket.ts).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { connectDevice } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const QUIET = { heartbeatIntervalMs: 3_600_000, sweepIntervalMs: 3_600_000 };

describe('an idle device session', () => {
  let gw: TestGateway;
  const upgrades: WeakRef<object>[] = [];

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!, {
      routes: [
        commandRoutes(QUIET),
        (ctx) => {
          ctx.app.server.prependListener('upgrade', (request: object) =>
            upgrades.push(new WeakRef(request)),
          );
        },
      ],
    });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('does not hold the request of its upgrade', async () => {
    const secret = await gw.insertDevice('mem-1');
    const device = await connectDevice(gw.url, 'mem-1', secret);
    device.send({ type: 'hello' });
    await device.next('welcome');
    expect(upgrades).toHaveLength(1);
    for (let i = 0; i < 10 && upgrades[0]!.deref() !== undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      gc();
    }
    expect(upgrades[0]!.deref()).toBeUndefined();
    // still connected and served
    device.send({ type: 'hello' });
    expect(await device.next('welcome')).toMatchObject({ type: 'welcome' });
    await device.close();
  });
});
