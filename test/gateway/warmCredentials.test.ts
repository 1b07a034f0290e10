/**
 * The credentials a gateway reads ahead as it starts (gateway/auth/warmCredentials.ts): the
 * devices most recently seen, up to its bound, are authenticated without a statement and
 * say hello without a statement of their commands; a command created after the read is
 * still resumed; a device changed while its slice is read is read again; and a bad bound is
 * refused before anything starts. On PostgreSQL, where a second gateway over the same
 * schema can count its own statements.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createGateway,
  deviceAuthHeaders,
  type Gateway,
  type GatewayOptions,
} from '../../gateway/index.js';
import { createCredentialCache } from '../../gateway/auth/credentialCache.js';
import { openStore, type CloudStore, asCloud } from '../../runtime/index.js';
import { connectDevice } from '../support/device.js';
import { recordStatements, trustHeld } from '../support/gatewayCaches.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const postgres = CLOUD_DIALECTS.find((d) => d.name === 'postgres');

/** How many fresh gateways a test starts before it gives up on one that held its trust. */
const ATTEMPTS = 3;

describe.skipIf(!postgres)('credentials read ahead as a gateway starts, on PostgreSQL', () => {
  let a: TestGateway;
  let store: CloudStore;
  /** Every statement run on `store`'s pool. */
  const statements: string[] = [];
  const secrets = new Map<string, string>();
  const started: Gateway[] = [];

  /** A gateway over `store` (A's schema), listening; closed after the tests. */
  const startGateway = async (options: Partial<GatewayOptions> = {}) => {
    const gateway = await createGateway({
      store,
      keys: a.keys,
      runtime: a.gateway.context.runtime,
      wasmStorageDir: mkdtempSync(join(tmpdir(), 'saffron-wasm-')),
      ...options,
    });
    started.push(gateway);
    return { gateway, url: await gateway.listen(0) };
  };
  const status = async (url: string, deviceId: string) => {
    const path = `/api/v1/devices/${deviceId}`;
    const headers = deviceAuthHeaders(deviceId, secrets.get(deviceId)!, {
      method: 'GET',
      pathWithQuery: path,
      body: '',
    });
    return (await fetch(`${url}${path}`, { headers })).status;
  };
  /** The credential reads (the webhook dispatcher's reads name `secret_ciphertext` too). */
  const isCredentialRead = (s: string) => s.includes('previous_secret_ciphertext');
  const credentialReads = () => statements.filter(isCredentialRead);

  beforeAll(async () => {
    a = await startTestGateway(postgres!);
    // seen two days ahead, one day ahead, never: the first two are the most recently seen
    for (const [deviceId, seenDaysAhead] of [
      ['warm-newest', 2],
      ['warm-newer', 1],
      ['warm-never', null],
    ] as const) {
      secrets.set(deviceId, await a.registerDevice(deviceId));
      if (seenDaysAhead !== null)
        await sql`UPDATE edge_devices SET last_seen = now() + make_interval(days => ${seenDaysAhead})
          WHERE device_id = ${deviceId}`.execute(a.handle.store.db);
    }
    store = asCloud(
      await openStore(process.env.DATABASE_URL!, {
        postgres: { schema: a.handle.location, maxConnections: 4 },
      }),
    );
    recordStatements(store, statements);
  });
  afterAll(async () => {
    for (const gateway of started) await gateway.close();
    await store.close();
    await a.close();
  });

  it('authenticates the devices most recently seen, up to its bound, without a statement', async () => {
    let attempt = 0;
    for (;;) {
      attempt++;
      statements.length = 0;
      const { gateway, url } = await startGateway({ warmDevices: 2 });
      let device: Awaited<ReturnType<typeof connectDevice>> | undefined;
      let during: string[] = [];
      // only a run during which the gateway vouched for its caches throughout counts
      const held = await trustHeld(gateway, async () => {
        expect(await gateway.warmed).toBe(2);
        expect(credentialReads()).toHaveLength(1); // the two read in one statement
        statements.length = 0;
        expect(await status(url, 'warm-newest')).toBe(200);
        expect(await status(url, 'warm-newer')).toBe(200);
        device = await connectDevice(url, 'warm-newest', secrets.get('warm-newest')!);
        device.send({ type: 'hello' });
        await device.next('welcome');
        during = [...statements];
      });
      await device?.close();
      if (held) {
        // neither the requests nor the socket read credentials, and the hello resumed nothing
        expect(during.filter(isCredentialRead)).toEqual([]);
        expect(during.filter((s) => s.includes('device_commands'))).toEqual([]);
        // beyond the bound: read on its first request
        statements.length = 0;
        expect(await status(url, 'warm-never')).toBe(200);
        expect(credentialReads()).toHaveLength(1);
        return;
      }
      expect(attempt, 'the gateway lost its trust during every attempt').toBeLessThan(ATTEMPTS);
    }
  });

  it('resumes the commands created after a device was read ahead', async () => {
    const { gateway, url } = await startGateway();
    expect(await gateway.warmed).toBe(3);
    const touched = vi.spyOn(gateway.context.quietDevices, 'touched');
    try {
      const created = await a.asUser(a.adminToken, '/api/v1/devices/warm-newer/commands', {
        method: 'POST',
        body: JSON.stringify({ command_type: 'DIAGNOSTIC', payload: { checks: ['link'] } }),
      });
      expect(created.status).toBe(201);
      const { command_id: commandId } = (await created.json()) as { command_id: string };
      // the gateway hears of the command: the read ahead no longer says "nothing to resume"
      await vi.waitFor(() => expect(touched).toHaveBeenCalledWith('warm-newer'));
      const device = await connectDevice(url, 'warm-newer', secrets.get('warm-newer')!);
      try {
        device.send({ type: 'hello' });
        await device.next('welcome');
        expect(await device.next('command')).toMatchObject({
          command: { command_id: commandId },
        });
      } finally {
        await device.close();
      }
    } finally {
      touched.mockRestore();
    }
  });

  it('reads again a device changed while its slice was being read', async () => {
    const cache = createCredentialCache(store, a.keys, () => true);
    const reading = cache.warm(['warm-never']);
    cache.apply({ kind: 'devices', deviceIds: ['warm-never'] }); // its change, heard meanwhile
    expect(await reading).toBe(1);
    const secret = secrets.get('warm-never')!;
    const check = (held: string[]) => held.includes(secret);
    statements.length = 0;
    expect(await cache.verify('warm-never', Date.now(), check)).toBe(true);
    expect(credentialReads()).toHaveLength(1);
    // read ahead with no change: held, and not read again ahead
    const unchanged = createCredentialCache(store, a.keys, () => true);
    expect(await unchanged.warm(['warm-never', 'warm-unknown'])).toBe(1);
    statements.length = 0;
    expect(await unchanged.verify('warm-never', Date.now(), check)).toBe(true);
    expect(await unchanged.warm(['warm-never'])).toBe(0);
    expect(credentialReads()).toEqual([]);
  });

  it('reads nothing ahead with a bound of 0, and refuses a bound that is no count', async () => {
    statements.length = 0;
    const { gateway } = await startGateway({ warmDevices: 0 });
    expect(await gateway.warmed).toBe(0);
    expect(statements.filter((s) => s.includes('last_seen IS NULL'))).toEqual([]);
    for (const warmDevices of [-1, 1.5, Number.NaN])
      await expect(startGateway({ warmDevices })).rejects.toThrow(/warmDevices must be/);
  });
});
