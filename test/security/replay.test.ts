/**
 * Replaying captured device traffic, to the gateway that answered it and to a second gateway
 * on the same PostgreSQL database (the case a load balancer makes possible). A request that
 * changes state is refused everywhere at once; a read is refused by the same gateway at
 * once and by the other one once the first gateway's write-behind batch is announced
 * (within the flush window); a captured socket upgrade opens a socket that can never prove
 * itself, so it gets no session, records no connection and displaces no one; the deprecated
 * nonce upgrade still works once and only once.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createGateway,
  deviceAuthHeaders,
  signSocketProof,
  type Gateway,
} from '../../gateway/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { registerDeviceRoutes } from '../../gateway/routes/devices.js';
import {
  connectDevice,
  legacySocketHeaders,
  refusedUpgrade,
  socketHeaders,
  type DeviceSocket,
  type Frame,
} from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

/** Write-behind interval of reads' nonces on both gateways. */
const FLUSH_MS = 100;
/** How long a challenged socket has to prove itself. */
const PROOF_TIMEOUT_MS = 400;

const routes = [
  registerDeviceRoutes,
  commandRoutes({
    heartbeatIntervalMs: 3_600_000,
    sweepIntervalMs: 3_600_000,
    proofTimeoutMs: PROOF_TIMEOUT_MS,
  }),
];

/** Two gateway processes need a shared server: PostgreSQL when DATABASE_URL names one. */
const postgres = CLOUD_DIALECTS.find((d) => d.name === 'postgres');

describe.runIf(postgres)('replays across two gateways on PostgreSQL', () => {
  let a: TestGateway;
  let b: Gateway;
  let bUrl: string;
  /** Sends the REBOOTs: an admin, as an operator's would wait for approval. */
  let sender: string;
  const secrets: Record<string, string> = {};

  beforeAll(async () => {
    a = await startTestGateway(postgres!, { routes, nonceFlushMs: FLUSH_MS });
    b = await createGateway({
      store: a.handle.store,
      keys: a.keys,
      routes,
      nonceFlushMs: FLUSH_MS,
    });
    bUrl = await b.listen(0);
    sender = a.adminToken;
    for (const id of ['rp-rest', 'rp-ws', 'rp-legacy']) secrets[id] = await a.insertDevice(id);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  /** A signed request of `deviceId`, captured: the same headers can be sent again. */
  const capture = (deviceId: string, method: string, path: string, body = '') => {
    const headers = {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...deviceAuthHeaders(deviceId, secrets[deviceId]!, { method, pathWithQuery: path, body }),
    };
    return (base: string) =>
      fetch(`${base}${path}`, { method, headers, ...(body ? { body } : {}) });
  };
  const codeOf = async (res: Response) => ((await res.json()) as { code?: string }).code;
  const deviceRow = (deviceId: string) =>
    a.handle.store.cloud
      .selectFrom('edge_devices')
      .selectAll()
      .where('device_id', '=', deviceId)
      .executeTakeFirstOrThrow();
  /** Every frame a socket receives from now on. */
  const recordFrames = (device: DeviceSocket) => {
    const frames: Frame[] = [];
    device.ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as Frame));
    return frames;
  };

  it('refuses a replayed POST on the other gateway and on the same one', async () => {
    const created = await a.asUser(sender, '/api/v1/devices/rp-rest/commands', {
      method: 'POST',
      body: JSON.stringify({ command_type: 'REBOOT', payload: { delay_seconds: 1 } }),
    });
    expect(created.status).toBe(201);
    const { command_id } = (await created.json()) as { command_id: string };
    // the command poll takes commands (a state change): strict although it is a GET
    const poll = capture('rp-rest', 'GET', '/api/v1/devices/rp-rest/commands');
    expect(((await (await poll(a.url)).json()) as { commands: unknown[] }).commands).toHaveLength(
      1,
    );
    const polledAgain = await poll(bUrl);
    expect([polledAgain.status, await codeOf(polledAgain)]).toEqual([401, 'REPLAYED_REQUEST']);

    const ack = capture(
      'rp-rest',
      'POST',
      `/api/v1/devices/rp-rest/commands/${command_id}/ack`,
      JSON.stringify({ status: 'EXECUTED', result: { ok: true } }),
    );
    expect((await ack(a.url)).status).toBe(200);
    for (const base of [bUrl, a.url]) {
      const replay = await ack(base);
      expect([replay.status, await codeOf(replay)]).toEqual([401, 'REPLAYED_REQUEST']);
    }
  });

  it('refuses a replayed GET on the same gateway at once', async () => {
    const read = capture('rp-rest', 'GET', '/api/v1/devices/rp-rest');
    expect((await read(a.url)).status).toBe(200);
    const replay = await read(a.url);
    expect([replay.status, await codeOf(replay)]).toEqual([401, 'REPLAYED_REQUEST']);
  });

  it('refuses a replayed GET on the other gateway once the flush window is over', async () => {
    const path = '/api/v1/devices/rp-rest';
    const headers = deviceAuthHeaders('rp-rest', secrets['rp-rest']!, {
      method: 'GET',
      pathWithQuery: path,
      body: '',
    });
    const nonce = headers['x-saffron-nonce']!;
    const answeredAt = Date.now();
    expect((await fetch(`${a.url}${path}`, { headers })).status).toBe(200);
    // nobody flushes by hand: the write-behind batch is written and announced on its own,
    // and the other gateway learns the nonce within the window (plus delivery)
    await vi.waitFor(
      () => expect(b.context.auth.nonces.knows('rp-rest', nonce, Date.now())).toBe(true),
      { timeout: 10 * FLUSH_MS, interval: 10 },
    );
    expect(Date.now() - answeredAt).toBeLessThan(10 * FLUSH_MS);
    const replay = await fetch(`${bUrl}${path}`, { headers });
    expect([replay.status, await codeOf(replay)]).toEqual([401, 'REPLAYED_REQUEST']);
    // and the shared table holds it, for gateways that start later
    const rows = await a.handle.store.cloud
      .selectFrom('device_request_nonces')
      .select('nonce')
      .where('device_id', '=', 'rp-rest')
      .where('nonce', '=', nonce)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('answers a read replayed to another gateway inside the window at most once, and counts it', async () => {
    // a gateway that writes reads' nonces behind (and signs of life) only every minute
    const slow = await createGateway({
      store: a.handle.store,
      keys: a.keys,
      routes: [registerDeviceRoutes],
      nonceFlushMs: 60_000,
      nonceLivenessMs: 240_000,
    });
    try {
      const slowUrl = await slow.listen(0);
      // a gateway answers reads from memory once it hears its own announcement back; until
      // then it records each nonce before answering, and the race below would not happen
      await vi.waitFor(() => expect(slow.context.auth.nonces.readsFromMemory()).toBe(true), {
        timeout: 5_000,
        interval: 10,
      });
      await vi.waitFor(() => expect(b.context.auth.nonces.readsFromMemory()).toBe(true), {
        timeout: 5_000,
        interval: 10,
      });
      const read = capture('rp-rest', 'GET', '/api/v1/devices/rp-rest');
      expect((await read(slowUrl)).status).toBe(200);
      // inside the window the other gateway cannot know: it answers the read document once
      expect((await read(bUrl)).status).toBe(200);
      const again = await read(bUrl);
      expect([again.status, await codeOf(again)]).toEqual([401, 'REPLAYED_REQUEST']);
      // b writes its batch first; the slow gateway's batch then finds the nonce taken
      await b.context.auth.nonces.flush();
      await slow.context.auth.nonces.flush();
      const metric = await slow.context.metrics
        .getSingleMetric('saffron_device_reads_replayed_across_gateways_total')!
        .get();
      expect(metric.values[0]?.value).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it('refuses on a gateway started later a GET answered before it started', async () => {
    const path = '/api/v1/devices/rp-rest';
    const headers = deviceAuthHeaders('rp-rest', secrets['rp-rest']!, {
      method: 'GET',
      pathWithQuery: path,
      body: '',
    });
    expect((await fetch(`${a.url}${path}`, { headers })).status).toBe(200);
    await a.gateway.context.auth.nonces.flush();
    // it missed the announcement: it loads the unexpired nonces when it starts
    const later = await createGateway({
      store: a.handle.store,
      keys: a.keys,
      routes: [registerDeviceRoutes],
    });
    try {
      const replay = await fetch(`${await later.listen(0)}${path}`, { headers });
      expect([replay.status, await codeOf(replay)]).toEqual([401, 'REPLAYED_REQUEST']);
    } finally {
      await later.close();
    }
  });

  it('checks reads strictly once it stops hearing its own announcements', async () => {
    const c = await createGateway({
      store: a.handle.store,
      keys: a.keys,
      routes: [registerDeviceRoutes],
      nonceFlushMs: FLUSH_MS,
      nonceLivenessMs: 400,
    });
    try {
      const cUrl = await c.listen(0);
      const nonces = c.context.auth.nonces;
      await vi.waitFor(() => expect(nonces.readsFromMemory()).toBe(true));
      // its notification connection goes quiet without an error, as a half-open one would
      await c.context.listener!.close();
      await vi.waitFor(() => expect(nonces.readsFromMemory()).toBe(false), { timeout: 2_000 });
      const read = capture('rp-rest', 'GET', '/api/v1/devices/rp-rest');
      expect((await read(a.url)).status).toBe(200);
      await a.gateway.context.auth.nonces.flush();
      // it never heard of the read, but the shared table it now checks has it
      const replay = await read(cUrl);
      expect([replay.status, await codeOf(replay)]).toEqual([401, 'REPLAYED_REQUEST']);
    } finally {
      await c.close();
    }
  });

  it('gives a replayed socket upgrade no session, on either gateway, and displaces no one', async () => {
    const path = '/api/v1/devices/rp-ws/ws';
    const captured = socketHeaders('rp-ws', secrets['rp-ws']!, path);
    const real = await connectDevice(a.url, 'rp-ws', secrets['rp-ws']!, new Date(), {
      headers: captured,
    });
    const realChallenge = await real.challenge;
    real.send({ type: 'hello' });
    await real.next('welcome');
    // the connect is written behind (link/presence.ts)
    await vi.waitFor(async () => expect((await deviceRow('rp-ws')).status).toBe('ONLINE'));

    // the attacker replays the upgrade and the hello it saw, proof and all
    const seenProof = signSocketProof(secrets['rp-ws']!, 'rp-ws', realChallenge);
    for (const base of [a.url, bUrl]) {
      const replayed = await connectDevice(base, 'rp-ws', 'unknown', new Date(), {
        headers: captured,
      });
      const frames = recordFrames(replayed);
      expect(await replayed.challenge).not.toBe(realChallenge);
      replayed.send({ type: 'hello', proof: seenProof });
      expect((await replayed.closed).code).toBe(4003);
      expect(frames.map((f) => f.type)).not.toContain('welcome');
    }
    // the real session is still the device's: a command reaches it
    const created = await a.asUser(sender, '/api/v1/devices/rp-ws/commands', {
      method: 'POST',
      body: JSON.stringify({ command_type: 'REBOOT', payload: { delay_seconds: 1 } }),
    });
    expect(created.status).toBe(201);
    expect(await real.next('command')).toMatchObject({ type: 'command' });
    await real.close();
    await vi.waitFor(async () => expect((await deviceRow('rp-ws')).status).toBe('OFFLINE'));

    // with the device away: a replay that says nothing, one that says a plain hello, one that
    // acks before proving, and one with a proof under a wrong secret — none records anything
    const before = await deviceRow('rp-ws');
    for (const base of [a.url, bUrl]) {
      const silent = await connectDevice(base, 'rp-ws', 'unknown', new Date(), {
        headers: captured,
      });
      const silentFrames = recordFrames(silent);
      expect((await silent.closed).code).toBe(4002);
      expect(silentFrames.map((f) => f.type)).not.toContain('welcome');

      const plain = await connectDevice(base, 'rp-ws', 'unknown', new Date(), {
        headers: captured,
      });
      await plain.challenge;
      plain.send({
        type: 'ack',
        command_id: '00000000-0000-4000-8000-000000000000',
        status: 'EXECUTED',
      });
      expect(await plain.next('error')).toMatchObject({ code: 'PROOF_REQUIRED' });
      plain.send({ type: 'hello', proof: undefined });
      expect((await plain.closed).code).toBe(4003);

      const wrong = await connectDevice(base, 'rp-ws', 'wrong-secret', new Date(), {
        headers: captured,
      });
      const wrongFrames = recordFrames(wrong);
      wrong.send({ type: 'hello' }); // proven with 'wrong-secret'
      expect((await wrong.closed).code).toBe(4003);
      expect(wrongFrames.map((f) => f.type)).not.toContain('welcome');
    }
    expect(await deviceRow('rp-ws')).toEqual(before);
  });

  it("takes a proof under a rotation's previous secret during its grace period, not after", async () => {
    const previous = secrets['rp-ws']!;
    const current = 'rotated-secret-0123456789abcdefghijklmnop';
    // written past the API (to set the grace period's end), so the gateway's credential
    // cache is told as the rotation route would tell it
    const rotate = async (graceEnds: Date) => {
      await a.handle.store.cloud
        .updateTable('edge_devices')
        .set({
          secret_ciphertext: a.keys.seal(current),
          previous_secret_ciphertext: a.keys.seal(previous),
          previous_secret_expires_at: a.handle.store.codec.time(graceEnds),
        })
        .where('device_id', '=', 'rp-ws')
        .execute();
      a.gateway.context.auth.credentials.apply({ kind: 'devices', deviceIds: ['rp-ws'] });
    };
    const upgrade = () => socketHeaders('rp-ws', current);
    await rotate(new Date(Date.now() + 60_000));
    const during = await connectDevice(a.url, 'rp-ws', previous, new Date(), {
      headers: upgrade(),
    });
    during.send({ type: 'hello' }); // proven with the previous secret
    expect(await during.next('welcome')).toMatchObject({ type: 'welcome' });
    await during.close();
    await rotate(new Date(Date.now() - 1));
    const after = await connectDevice(a.url, 'rp-ws', previous, new Date(), { headers: upgrade() });
    after.send({ type: 'hello' });
    expect((await after.closed).code).toBe(4003);
    const withCurrent = await connectDevice(a.url, 'rp-ws', current, new Date(), {
      headers: upgrade(),
    });
    withCurrent.send({ type: 'hello' });
    expect(await withCurrent.next('welcome')).toMatchObject({ type: 'welcome' });
    await withCurrent.close();
    secrets['rp-ws'] = current;
  });

  it('still takes the deprecated nonce upgrade with a plain hello, once', async () => {
    const path = '/api/v1/devices/rp-legacy/ws';
    const headers = legacySocketHeaders('rp-legacy', secrets['rp-legacy']!, path);
    const device = await connectDevice(bUrl, 'rp-legacy', secrets['rp-legacy']!, new Date(), {
      headers,
    });
    const frames = recordFrames(device);
    device.send({ type: 'hello' });
    expect(await device.next('welcome')).toMatchObject({ type: 'welcome' });
    expect(frames.map((f) => f.type)).not.toContain('challenge');
    await vi.waitFor(async () => expect((await deviceRow('rp-legacy')).status).toBe('ONLINE'));
    for (const base of [bUrl, a.url])
      expect(await refusedUpgrade(base, path, headers)).toMatchObject({
        status: 401,
        body: { code: 'REPLAYED_REQUEST' },
      });
    await device.close();
  });
});
