/**
 * Config sync against a real gateway on loopback and a real SQLite edge store: the cloud key
 * pinned on first use; 200 → checked, stored with its ETag and applied; 304 → nothing
 * changes; documents altered on the way (a tampered signature, a corrupted checksum), a
 * document that fails the schema and a cache edited on disk are refused and the last good
 * configuration stays; a failed hot-reload is retried; the poll interval comes from the
 * configuration, and stop() leaves no timer behind. Tampering happens in an injected fetch
 * between the agent and the gateway: the client side is what is under test.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createCloudClient,
  createConfigSync,
  readSyncState,
  resolveCloudPublicKey,
  SYNC_STATE_KEYS,
  type ConfigRejection,
  type ConfigSyncEvent,
  type VerifiedConfig,
} from '../../edge/index.js';
import { contentChecksum } from '../../runtime/index.js';
import {
  eventLog,
  manualTimers,
  openEdgeStore,
  type EdgeStoreHandle,
} from '../support/edgeComponents.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Doc = Record<string, unknown>;

describe('edge config sync', () => {
  let gw: TestGateway;
  let edge: EdgeStoreHandle;
  let deviceId: string;
  let secret: string;
  let counter = 0;
  /** Rewrites 200 config bodies on their way to the agent when set. */
  let alter: ((doc: Doc) => Doc) | undefined;
  /** Every config request the agent made: path, If-None-Match sent, status received. */
  let seen: { path: string; ifNoneMatch: string | null; status: number }[];

  const interposed: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    seen.push({
      path: url.pathname,
      ifNoneMatch: headers.get('if-none-match'),
      status: response.status,
    });
    if (!alter || response.status !== 200 || !url.pathname.includes('config')) return response;
    const altered = alter((await response.json()) as Doc);
    return new Response(JSON.stringify(altered), {
      status: 200,
      headers: { 'content-type': 'application/json', etag: response.headers.get('etag') ?? '' },
    });
  };

  const cloud = (fetchImpl: typeof fetch = interposed) =>
    createCloudClient({ baseUrl: gw.url, deviceId, secret, fetch: fetchImpl });
  const publish = async (config: Doc) => {
    const res = await gw.asUser(gw.adminToken, `/api/v1/config/device/${deviceId}`, {
      method: 'PUT',
      body: JSON.stringify(config),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const cacheRow = (name: string) =>
    edge.store.edge
      .selectFrom('device_config_cache')
      .selectAll()
      .where('config_name', '=', name)
      .executeTakeFirst();

  beforeAll(async () => {
    gw = await startTestGateway(CLOUD_DIALECTS[0]!);
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(async (context) => {
    deviceId = `edge-cfg-${++counter}`;
    secret = await gw.insertDevice(deviceId);
    edge = await openEdgeStore();
    alter = undefined;
    seen = [];
    context.onTestFinished(() => edge.close());
  });

  const setup = (options: Partial<Parameters<typeof createConfigSync>[0]> = {}) => {
    const log = eventLog<ConfigSyncEvent>();
    const applied: VerifiedConfig[] = [];
    const rejected: ConfigRejection[] = [];
    const sync = createConfigSync({
      store: edge.store,
      cloud: cloud(),
      publicKeyPem: gw.keys.publicKeyPem,
      onApplied: (config) => void applied.push(config),
      onRejected: (rejection) => void rejected.push(rejection),
      onEvent: log.push,
      timers: manualTimers(),
      ...options,
    });
    return { sync, log, applied, rejected };
  };

  it('pins the cloud public key on first use and never fetches it again', async () => {
    const first = await resolveCloudPublicKey({ store: edge.store, cloud: cloud() });
    expect(first).toMatchObject({ source: 'fetched', publicKeyPem: gw.keys.publicKeyPem });
    expect(first.keyId).toMatch(/^[0-9a-f]{64}$/);
    const pinned = await readSyncState(edge.store, SYNC_STATE_KEYS.cloudPublicKey);
    expect(pinned?.value).toMatchObject({ key_id: first.keyId, origin: 'cloud' });

    const offline: typeof fetch = () => Promise.reject(new Error('network down'));
    const again = await resolveCloudPublicKey({ store: edge.store, cloud: cloud(offline) });
    expect(again).toEqual({ ...first, source: 'pinned' });

    // a provisioned key must be the one pinned from the cloud: another one is refused
    const { publicKeyPem: other } = await import('../../gateway/index.js').then((m) =>
      m.ephemeralKeyring(),
    );
    await expect(
      resolveCloudPublicKey({ store: edge.store, cloud: cloud(offline), configuredPem: other }),
    ).rejects.toMatchObject({ code: 'CONFIG_PUBLIC_KEY_MISMATCH' });
    const matching = await resolveCloudPublicKey({
      store: edge.store,
      cloud: cloud(offline),
      configuredPem: gw.keys.publicKeyPem,
    });
    expect(matching).toMatchObject({ source: 'configured', keyId: first.keyId });

    // on a device provisioned from the start, a newly provisioned key is a rotation: pinned
    await edge.store.edge.deleteFrom('edge_sync_state').execute();
    await resolveCloudPublicKey({
      store: edge.store,
      cloud: cloud(offline),
      configuredPem: gw.keys.publicKeyPem,
    });
    const configured = await resolveCloudPublicKey({
      store: edge.store,
      cloud: cloud(offline),
      configuredPem: other,
    });
    expect(configured.source).toBe('configured');
    expect(configured.keyId).not.toBe(first.keyId);
    expect((await readSyncState(edge.store, SYNC_STATE_KEYS.cloudPublicKey))?.value).toMatchObject({
      key_id: configured.keyId,
      origin: 'configured',
    });
    await expect(
      resolveCloudPublicKey({ store: edge.store, cloud: cloud(offline), configuredPem: 'nope' }),
    ).rejects.toMatchObject({ code: 'CONFIG_PUBLIC_KEY_INVALID' });
  });

  it('a fresh device with no key pinned and no network cannot resolve one', async () => {
    const offline: typeof fetch = () => Promise.reject(new Error('network down'));
    await expect(
      resolveCloudPublicKey({ store: edge.store, cloud: cloud(offline) }),
    ).rejects.toMatchObject({ code: 'CONFIG_PUBLIC_KEY_UNAVAILABLE', retryable: true });
  });

  it('200 → checked, stored with its ETag and applied; 304 → nothing changes', async () => {
    await publish({ currency: 'EUR', limits: { offline_max_minor: 5000 } });
    const { sync, applied } = setup();
    const first = await sync.pollNow();
    expect(first.map((r) => [r.name, r.outcome])).toEqual([
      ['device', 'applied'],
      ['fraud_rules', 'applied'],
    ]);
    expect(seen.map((s) => [s.ifNoneMatch, s.status])).toEqual([
      [null, 200],
      [null, 200],
    ]);
    const device = applied.find((c) => c.name === 'device')!;
    expect(device.content).toEqual({ currency: 'EUR', limits: { offline_max_minor: 5000 } });
    expect(device).toMatchObject({ revision: 1, version: 'f0.t0.d1' });
    // the stored ETag is the cloud's
    const direct = await gw.asDevice(deviceId, secret, `/api/v1/devices/${deviceId}/config`);
    const row = await cacheRow('device');
    expect(row).toMatchObject({ etag: direct.headers.get('etag'), version: 1 });
    expect(row?.applied_at).not.toBeNull();
    expect(sync.current('device')?.etag).toBe(direct.headers.get('etag'));

    seen = [];
    const second = await sync.pollNow();
    expect(second.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(seen.map((s) => s.status)).toEqual([304, 304]);
    expect(seen[0]!.ifNoneMatch).toBe(direct.headers.get('etag'));
    expect(applied).toHaveLength(2);
    expect(await cacheRow('device')).toEqual(row);

    await publish({ currency: 'USD' });
    const third = await sync.pollNow();
    expect(third[0]).toMatchObject({ name: 'device', outcome: 'applied' });
    expect(applied.at(-1)).toMatchObject({ revision: 2, content: { currency: 'USD' } });
    expect((await cacheRow('device'))?.version).toBe(2);
  });

  it('force fetches although the ETag matches, and applies nothing new', async () => {
    await publish({ currency: 'EUR' });
    const { sync, applied } = setup();
    await sync.pollNow();
    seen = [];
    const forced = await sync.pollNow({ force: true });
    expect(seen.map((s) => [s.ifNoneMatch, s.status])).toEqual([
      [null, 200],
      [null, 200],
    ]);
    expect(forced.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(applied).toHaveLength(2);
  });

  const refusesAndKeeps = async (
    change: (doc: Doc) => Doc,
    code: string,
    newConfig: Doc = { currency: 'GBP' },
  ) => {
    await publish({ currency: 'EUR' });
    const { sync, applied, rejected, log } = setup();
    await sync.pollNow();
    const good = await cacheRow('device');
    await publish(newConfig);
    alter = (doc) => (doc.type === 'saffron.device-config.v1' ? change(doc) : doc);
    const results = await sync.pollNow();
    expect(results[0]).toMatchObject({ name: 'device', outcome: 'rejected', error: { code } });
    expect(rejected).toEqual([
      expect.objectContaining({ config_name: 'device', code, source: 'cloud' }),
    ]);
    expect(log.all('edge.config.rejected')).toHaveLength(1);
    // the last good configuration stays: in the cache, in memory, and nothing was applied
    expect(await cacheRow('device')).toEqual(good);
    expect(sync.current('device')?.content).toEqual({ currency: 'EUR' });
    expect(applied.filter((c) => c.name === 'device')).toHaveLength(1);
    const stored = await readSyncState(edge.store, SYNC_STATE_KEYS.configRejection);
    expect(stored?.value).toMatchObject({ config_name: 'device', code });
    expect(sync.status().lastRejection).toMatchObject({ code });
    expect(sync.status().documents.device).toMatchObject({
      lastOutcome: 'rejected',
      etag: good?.etag,
    });
    // the untouched document is loaded as usual once the tampering stops
    alter = undefined;
    const after = await sync.pollNow();
    expect(after[0]).toMatchObject({ outcome: 'applied' });
    return sync;
  };

  it('refuses a document whose signature does not verify (CONFIG_TAMPERED)', async () => {
    await refusesAndKeeps((doc) => {
      // a careful attacker fixes the checksum; only the signature can tell
      const config = { ...(doc.config as Doc), currency: 'XXX' };
      return { ...doc, config, checksum: contentChecksum(config) };
    }, 'CONFIG_TAMPERED');
  });

  it('refuses a document whose checksum does not match (CONFIG_CORRUPTED)', async () => {
    await refusesAndKeeps(
      (doc) => ({ ...doc, config: { ...(doc.config as Doc), currency: 'G\u0000P' } }),
      'CONFIG_CORRUPTED',
    );
  });

  it('refuses a signed document that fails the schema (CONFIG_SCHEMA_INVALID)', async () => {
    await publish({ currency: 'EUR' });
    const { sync, rejected } = setup();
    await sync.pollNow();
    await publish({ config_poll_interval_seconds: 1 });
    const results = await sync.pollNow();
    expect(results[0]).toMatchObject({
      outcome: 'rejected',
      error: { code: 'CONFIG_SCHEMA_INVALID' },
    });
    expect(rejected[0]?.message).toContain('$.config.config_poll_interval_seconds');
    expect(sync.current('device')?.content).toEqual({ currency: 'EUR' });
  });

  it('refuses a document signed for another device', async () => {
    const otherId = `${deviceId}-other`;
    const otherSecret = await gw.insertDevice(otherId);
    const other = await gw.asDevice(otherId, otherSecret, `/api/v1/devices/${otherId}/config`);
    const foreign = (await other.json()) as Doc;
    await publish({ currency: 'EUR' });
    const { sync } = setup();
    alter = (doc) => (doc.type === 'saffron.device-config.v1' ? foreign : doc);
    const results = await sync.pollNow();
    expect(results[0]).toMatchObject({ error: { code: 'CONFIG_DEVICE_MISMATCH' } });
    expect(await cacheRow('device')).toBeUndefined();
  });

  it('checks the cache again at start: one edited on disk is refused and replaced', async () => {
    await publish({ currency: 'EUR' });
    const first = setup();
    await first.sync.pollNow();
    await first.sync.stop();
    // edit the cached configuration in the SQLite file
    await sql`UPDATE device_config_cache SET config = json_set(config, '$.config.currency', 'XXX') WHERE config_name = 'device'`.execute(
      edge.store.db,
    );
    const second = setup();
    await second.sync.start();
    expect(second.rejected).toEqual([
      expect.objectContaining({ config_name: 'device', code: 'CONFIG_CORRUPTED', source: 'cache' }),
    ]);
    // the cached fraud rules were fine and are applied at start, before any poll
    expect(second.applied.map((c) => c.name)).toEqual(['fraud_rules']);
    const polled = await second.log.next('edge.config.polled');
    expect(polled.results[0]).toMatchObject({ name: 'device', outcome: 'applied' });
    expect(seen.at(-2)).toMatchObject({ ifNoneMatch: null, status: 200 });
    expect(second.sync.current('device')?.content).toEqual({ currency: 'EUR' });
    await second.sync.stop();
  });

  it('refuses a cached document whose stored ETag is not its own', async () => {
    await publish({ currency: 'EUR' });
    await setup().sync.pollNow();
    await edge.store.edge
      .updateTable('device_config_cache')
      .set({ etag: '"0000"' })
      .where('config_name', '=', 'fraud_rules')
      .execute();
    const { sync, rejected, log } = setup();
    await sync.start();
    expect(rejected).toEqual([
      expect.objectContaining({
        config_name: 'fraud_rules',
        code: 'CONFIG_CORRUPTED',
        etag: '"0000"',
      }),
    ]);
    expect(rejected[0]?.message).toContain('ETag');
    const polled = await log.next('edge.config.polled');
    expect(polled.results.map((r) => r.outcome)).toEqual(['unchanged', 'applied']);
    expect((await cacheRow('fraud_rules'))?.etag).toBe(sync.current('fraud_rules')?.etag);
    await sync.stop();
  });

  it('applies the cached configuration at start, offline', async () => {
    await publish({ currency: 'EUR' });
    await setup().sync.pollNow();
    const offline: typeof fetch = () => Promise.reject(new Error('network down'));
    const { sync, applied, log } = setup({ cloud: cloud(offline) });
    await sync.start();
    expect(applied.map((c) => [c.name, c.revision])).toEqual([
      ['device', 1],
      ['fraud_rules', 1],
    ]);
    const polled = await log.next('edge.config.polled');
    expect(polled.results.map((r) => [r.outcome, r.error?.code])).toEqual([
      ['failed', 'CONFIG_FETCH_FAILED'],
      ['failed', 'CONFIG_FETCH_FAILED'],
    ]);
    expect(sync.current('device')?.content).toEqual({ currency: 'EUR' });
    await sync.stop();
  });

  it('a hot-reload that throws leaves the document unapplied, and it is applied next round', async () => {
    await publish({ currency: 'EUR' });
    let fail = true;
    const applied: VerifiedConfig[] = [];
    const { sync } = setup({
      onApplied: (config) => {
        if (fail && config.name === 'device') throw new Error('engine busy');
        applied.push(config);
      },
    });
    const first = await sync.pollNow();
    expect(first[0]).toMatchObject({ outcome: 'failed', error: { code: 'CONFIG_APPLY_FAILED' } });
    expect((await cacheRow('device'))?.applied_at).toBeNull();
    expect(sync.current('device')).toBeUndefined();
    fail = false;
    seen = [];
    const second = await sync.pollNow();
    expect(second[0]).toMatchObject({ outcome: 'unchanged' });
    expect(seen[0]?.status).toBe(304);
    expect(applied.map((c) => c.name)).toEqual(['fraud_rules', 'device']);
    expect((await cacheRow('device'))?.applied_at).not.toBeNull();
  });

  it('polls asked for during a round share one round after it, which fetches what the first missed', async () => {
    await publish({ currency: 'EUR' });
    let reloading!: () => void;
    const reloadStarted = new Promise<void>((resolve) => (reloading = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const { sync } = setup({
      onApplied: async (config) => {
        if (held || config.name !== 'device') return;
        held = true;
        reloading();
        await released;
      },
    });
    const first = sync.pollNow();
    await reloadStarted; // the round fetched the configuration and is applying it
    await publish({ currency: 'USD' });
    const second = sync.pollNow();
    const third = sync.pollNow({ force: true });
    release();
    expect((await first).map((r) => r.outcome)).toEqual(['applied', 'applied']);
    const [a, b] = await Promise.all([second, third]);
    expect(b).toBe(a);
    expect(a.map((r) => r.outcome)).toEqual(['applied', 'unchanged']);
    expect(sync.current('device')?.content).toEqual({ currency: 'USD' });
    // two rounds of two documents, the shared one forced as its second caller asked
    expect(seen.map((s) => [s.ifNoneMatch, s.status])).toEqual([
      [null, 200],
      [null, 200],
      [null, 200],
      [null, 200],
    ]);
  });

  it('polls on the interval the configuration names; stop() leaves no timer', async () => {
    await publish({ currency: 'EUR', config_poll_interval_seconds: 90 });
    const timers = manualTimers();
    const { sync, log } = setup({ timers, defaultIntervalMs: 600_000 });
    await sync.start();
    await log.next('edge.config.polled');
    expect(sync.status().intervalMs).toBe(90_000);
    expect(timers.pending().map((t) => t.ms)).toEqual([90_000]);
    const next = log.upcoming('edge.config.polled');
    expect(timers.fire()).toBe(1);
    expect((await next).results.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged']);
    expect(timers.pending().map((t) => t.ms)).toEqual([90_000]);
    await sync.stop();
    expect(timers.pending()).toEqual([]);
    expect(sync.status()).toMatchObject({ running: false, nextPollAt: null });
  });

  it('backs off after failed polls, never beyond the interval', async () => {
    const timers = manualTimers();
    const offline: typeof fetch = () => Promise.reject(new Error('network down'));
    const { sync, log } = setup({
      cloud: cloud(offline),
      timers,
      defaultIntervalMs: 60_000,
      retry: { baseMs: 1_000, maxMs: 600_000 },
      random: () => 0.5, // three quarters of each ceiling
    });
    await sync.start();
    await log.next('edge.config.polled');
    const delays = [timers.pending()[0]!.ms];
    for (let round = 1; round < 8; round++) {
      const polled = log.upcoming('edge.config.polled');
      expect(timers.fire()).toBe(1);
      await polled;
      delays.push(timers.pending()[0]!.ms);
    }
    expect(delays).toEqual([750, 1_500, 3_000, 6_000, 12_000, 24_000, 48_000, 60_000]);
    await sync.stop();
    expect(timers.pending()).toEqual([]);
  });
});
