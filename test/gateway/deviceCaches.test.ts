/**
 * What gateways hold in memory about devices — credentials and the ETags of the documents
 * devices poll — across two gateway processes on one PostgreSQL schema: a rotation,
 * deletion or type change on one gateway reaches the other's caches within a bound far
 * below the caches' TTL (so through the change notification, not by expiry); a new layer
 * or policy published on one is served by the other; a gateway whose LISTEN connection is
 * lost keeps nothing until it holds again, and one that goes quiet without an error serves
 * nothing from memory once its own announcements stop coming back; and an unchanged poll
 * answered from memory runs
 * no statement but the nonce's; a device read cold on its upgrade with no command waiting,
 * or whose last session on the gateway left nothing to resume, says hello without a
 * statement of its commands, unless a command was created meanwhile; and a command pushed
 * and left unacked, on either gateway, is pushed again on the next hello. (Devices have no disabled state: deletion is how one is
 * shut out, and a PATCH of its type is the change of its registry row tested here.)
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createApiToken,
  createGateway,
  deviceAuthHeaders,
  type Gateway,
} from '../../gateway/index.js';
import { createCredentialCache } from '../../gateway/auth/credentialCache.js';
import { registerConfigRoutes } from '../../gateway/config/routes.js';
import { openStore, type CloudStore, asCloud } from '../../runtime/index.js';
import {
  getDeviceSecret,
  rotateDeviceSecret,
} from '../../gateway/devices/store/devices/rotateDeviceSecret.js';
import { runCli } from '../support/cli.js';
import { connectDevice } from '../support/device.js';
import { recordStatements, trustHeld } from '../support/gatewayCaches.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const postgres = CLOUD_DIALECTS.find((d) => d.name === 'postgres');

/** How soon the other gateway must see a change: far below the caches' 10 min TTL. */
const BOUND_MS = 2000;

/** Wait until `condition` holds, polling; fails after `timeoutMs`. Returns the time taken. */
async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not so after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

const json = (value: unknown) => JSON.stringify(value);

describe.skipIf(!postgres)('device caches across two gateways on PostgreSQL', () => {
  let a: TestGateway;
  let bStore: CloudStore;
  let b: Gateway;
  let bUrl: string;
  /** Backend process ids of B's pool's connections (its LISTEN connection among them). */
  const bPids = new Set<number>();
  /** Every statement B's pool runs. */
  const bStatements: string[] = [];

  /** A signed GET as `deviceId` on the gateway at `base`. */
  const signedGet = (
    base: string,
    deviceId: string,
    secret: string,
    path: string,
    headers: Record<string, string> = {},
  ) =>
    fetch(`${base}${path}`, {
      headers: {
        ...headers,
        ...deviceAuthHeaders(deviceId, secret, { method: 'GET', pathWithQuery: path, body: '' }),
      },
    });
  const status = async (base: string, deviceId: string, secret: string) =>
    (await signedGet(base, deviceId, secret, `/api/v1/devices/${deviceId}`)).status;
  const admin = (path: string, init: RequestInit = {}) => a.asUser(a.adminToken, path, init);

  const register = (deviceId: string) => a.registerDevice(deviceId);

  /** Registered, and authenticated on both gateways: both hold its credentials. */
  const warmDevice = async (deviceId: string) => {
    const secret = await register(deviceId);
    expect(await status(a.url, deviceId, secret)).toBe(200);
    expect(await status(bUrl, deviceId, secret)).toBe(200);
    return secret;
  };

  beforeAll(async () => {
    a = await startTestGateway(postgres!);
    bStore = asCloud(
      await openStore(process.env.DATABASE_URL!, {
        postgres: { schema: a.handle.location, maxConnections: 4 },
      }),
    );
    const driver = bStore.driver;
    if (driver.dialect === 'postgres')
      driver.pool.on('acquire', (c) =>
        bPids.add((c as unknown as { processID: number }).processID),
      );
    recordStatements(bStore, bStatements);
    b = await createGateway({
      store: bStore,
      keys: a.keys,
      wasmStorageDir: mkdtempSync(join(tmpdir(), 'saffron-wasm-')),
    });
    bUrl = await b.listen(0);
    // the credentials read ahead as B starts are read before any statement is counted
    await b.warmed;
  });
  afterAll(async () => {
    await b.close();
    await bStore.close();
    await a.close();
  });

  it('refuses a rotated secret on the other gateway within the bound', async () => {
    const old = await warmDevice('cache-rot-1');
    const res = await admin('/api/v1/devices/cache-rot-1/rotate-secret', {
      method: 'POST',
      body: json({ grace_period_seconds: 0 }),
    });
    expect(res.status).toBe(200);
    const fresh = ((await res.json()) as { device_secret: string }).device_secret;
    // the gateway that rotated refuses at once
    expect(await status(a.url, 'cache-rot-1', old)).toBe(401);
    const took = await waitUntil(async () => (await status(bUrl, 'cache-rot-1', old)) === 401);
    expect(took).toBeLessThan(BOUND_MS);
    expect(await status(bUrl, 'cache-rot-1', fresh)).toBe(200);
  });

  it('takes a new secret on the other gateway at once, and the old one during its grace period', async () => {
    const old = await warmDevice('cache-rot-2');
    const res = await admin('/api/v1/devices/cache-rot-2/rotate-secret', { method: 'POST' });
    expect(res.status).toBe(200);
    const fresh = ((await res.json()) as { device_secret: string }).device_secret;
    // at once, whether or not B has heard of the rotation (a refusal from memory is read
    // again: see the next test, which holds the notification back)
    expect(await status(bUrl, 'cache-rot-2', fresh)).toBe(200);
    expect(await status(bUrl, 'cache-rot-2', old)).toBe(200);
  });

  it('answers only acceptance from memory: a refusal is checked on a fresh read', async () => {
    const old = await register('cache-rot-3');
    const store = a.handle.store;
    const cache = createCredentialCache(store, a.keys, () => true);
    const signs = (secret: string) => (secrets: string[]) => secrets.includes(secret);
    const now = new Date();
    expect(await cache.verify('cache-rot-3', now.getTime(), signs(old))).toBe(true);
    // rotated behind the cache's back (as if the notification had not arrived yet)
    const sealed = await getDeviceSecret(store, 'cache-rot-3');
    const fresh = 'a-new-secret-for-cache-rot-3';
    const next = a.keys.seal(fresh);
    const rotation = { deviceId: 'cache-rot-3', expected: sealed!.secretCiphertext!, next };
    expect(await rotateDeviceSecret(store, { ...rotation, previousExpiresAt: now }, now)).toBe(
      true,
    );
    expect(await cache.verify('cache-rot-3', now.getTime(), signs(fresh))).toBe(true);
    expect(await cache.verify('cache-rot-3', now.getTime(), signs(old))).toBe(false);
    // what it accepted stays in memory until a notification or the TTL: the row is gone here
    await store.cloud.deleteFrom('edge_devices').where('device_id', '=', 'cache-rot-3').execute();
    expect(await cache.verify('cache-rot-3', now.getTime(), signs(fresh))).toBe(true);
    cache.apply({ kind: 'devices', deviceIds: ['cache-rot-3'] });
    expect(await cache.verify('cache-rot-3', now.getTime(), signs(fresh))).toBe(false);
  });

  it('refuses a deleted device on the other gateway within the bound', async () => {
    const secret = await warmDevice('cache-del-1');
    expect((await admin('/api/v1/devices/cache-del-1', { method: 'DELETE' })).status).toBe(204);
    expect(await status(a.url, 'cache-del-1', secret)).toBe(401);
    const took = await waitUntil(async () => (await status(bUrl, 'cache-del-1', secret)) === 401);
    expect(took).toBeLessThan(BOUND_MS);
    // registered again under the same id: the new secret is taken at once
    const again = await register('cache-del-1');
    expect(await status(bUrl, 'cache-del-1', again)).toBe(200);
  });

  /** An operator's DIAGNOSTIC command to `deviceId` on the gateway at `base`: its status. */
  const diagnose = async (base: string, token: string, deviceId: string) =>
    (
      await fetch(`${base}/api/v1/devices/${deviceId}/commands`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: json({ command_type: 'DIAGNOSTIC', payload: {} }),
      })
    ).status;

  it('refuses a token revoked on one gateway on the other within the bound, also from the command line', async () => {
    const listDevices = async (base: string, token: string) =>
      (await fetch(`${base}/api/v1/devices`, { headers: { authorization: `Bearer ${token}` } }))
        .status;
    for (const via of ['route', 'command line'] as const) {
      const created = await createApiToken(a.handle.store, { name: via, role: 'viewer' });
      expect(await listDevices(a.url, created.token)).toBe(200);
      expect(await listDevices(bUrl, created.token)).toBe(200);
      // held in memory now: B reads no token for it
      bStatements.length = 0;
      expect(await listDevices(bUrl, created.token)).toBe(200);
      expect(bStatements.filter((s) => s.includes('api_tokens'))).toEqual([]);
      if (via === 'route')
        expect((await admin(`/api/v1/users/${created.tokenId}`, { method: 'DELETE' })).status).toBe(
          204,
        );
      else {
        // what `saffron users revoke` runs, from a process that is no gateway
        const url = new URL(process.env.DATABASE_URL!);
        url.searchParams.set('options', `-c search_path=${a.handle.location}`);
        const revoked = await runCli([
          'users',
          'revoke',
          '--token-id',
          created.tokenId,
          '--db',
          url.toString(),
        ]);
        expect(revoked.code, revoked.stderr).toBe(0);
      }
      const took = await waitUntil(async () => (await listDevices(bUrl, created.token)) === 401);
      expect(took).toBeLessThan(BOUND_MS);
      expect(await listDevices(a.url, created.token)).toBe(401);
    }
  });

  it('judges commands on the other gateway by a policy or device type changed on one, within the bound', async () => {
    const operator = await a.token('operator');
    await register('cache-gate-1');
    // B holds the DIAGNOSTIC rules and the device's attributes after this
    expect(await diagnose(bUrl, operator, 'cache-gate-1')).toBe(201);
    bStatements.length = 0;
    expect(await diagnose(bUrl, operator, 'cache-gate-1')).toBe(201);
    const gateReads = bStatements.filter((s) =>
      /api_tokens|command_versions|authorization_policies|device_type/.test(s),
    );
    expect(gateReads).toEqual([]);

    // a policy created on A: DIAGNOSTIC to kiosks needs an admin
    const created = await admin('/api/v1/authorization-policies', {
      method: 'POST',
      body: json({
        name: 'cache-gate-kiosks',
        command_type: 'DIAGNOSTIC',
        device_filter: { device_types: ['kiosk'] },
        required_role: 'admin',
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const policyId = ((await created.json()) as { policy_id: string }).policy_id;
    // the device is a POS: still sent; B has dropped its rules and reads them again
    expect(await diagnose(bUrl, operator, 'cache-gate-1')).toBe(201);
    // the device's type changed on A: B refuses the operator within the bound
    const patched = await admin('/api/v1/devices/cache-gate-1', {
      method: 'PATCH',
      body: json({ device_type: 'kiosk' }),
    });
    expect(patched.status).toBe(200);
    let took = await waitUntil(
      async () => (await diagnose(bUrl, operator, 'cache-gate-1')) === 403,
    );
    expect(took).toBeLessThan(BOUND_MS);
    // the policy disabled on A: B sends again within the bound
    const disabled = await admin(`/api/v1/authorization-policies/${policyId}`, {
      method: 'PUT',
      body: json({
        name: 'cache-gate-kiosks',
        command_type: 'DIAGNOSTIC',
        device_filter: { device_types: ['kiosk'] },
        required_role: 'admin',
        enabled: false,
      }),
    });
    expect(disabled.status).toBe(200);
    took = await waitUntil(async () => (await diagnose(bUrl, operator, 'cache-gate-1')) === 201);
    expect(took).toBeLessThan(BOUND_MS);
    // a version registered on A: B judges the payload by its schema within the bound
    const version = await admin('/api/v1/command-types/DIAGNOSTIC/versions', {
      method: 'POST',
      body: json({
        version: '9.0.0',
        payload_schema: { type: 'object', required: ['checks'] },
      }),
    });
    expect(version.status, await version.clone().text()).toBe(201);
    took = await waitUntil(async () => (await diagnose(bUrl, operator, 'cache-gate-1')) === 422);
    expect(took).toBeLessThan(BOUND_MS);
  });

  it('judges commands on the other gateway by a role assignment made or taken back on one, within the bound', async () => {
    const send = async (base: string, token: string) =>
      (
        await fetch(`${base}/api/v1/devices/cache-roles-1/commands`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: json({ command_type: 'SYNC_TRANSACTIONS', payload: {} }),
        })
      ).status;
    await register('cache-roles-1');
    expect(
      (
        await admin('/api/v1/devices/cache-roles-1', {
          method: 'PATCH',
          body: json({ device_type: 'vault' }),
        })
      ).status,
    ).toBe(200);
    const policy = await admin('/api/v1/authorization-policies', {
      method: 'POST',
      body: json({
        name: 'cache-roles-vaults',
        command_type: 'SYNC_TRANSACTIONS',
        device_filter: { device_types: ['vault'] },
        required_role: 'admin',
      }),
    });
    expect(policy.status, await policy.clone().text()).toBe(201);
    const operator = await createApiToken(a.handle.store, {
      name: 'vault-keeper',
      role: 'operator',
    });
    await waitUntil(async () => (await send(bUrl, operator.token)) === 403);
    // B holds the operator's (empty) assignments now: a refusal reads nothing
    bStatements.length = 0;
    expect(await send(bUrl, operator.token)).toBe(403);
    expect(bStatements.filter((s) => s.includes('role_assignments'))).toEqual([]);

    // the admin role given to the operator's token on A: B sends within the bound
    const assigned = await admin('/api/v1/role-assignments', {
      method: 'POST',
      body: json({ principal_type: 'token', principal_id: operator.tokenId, role_name: 'admin' }),
    });
    expect(assigned.status, await assigned.clone().text()).toBe(201);
    const assignmentId = ((await assigned.json()) as { assignment_id: string }).assignment_id;
    let took = await waitUntil(async () => (await send(bUrl, operator.token)) === 201);
    expect(took).toBeLessThan(BOUND_MS);
    bStatements.length = 0;
    expect(await send(bUrl, operator.token)).toBe(201);
    expect(bStatements.filter((s) => s.includes('role_assignments'))).toEqual([]);

    // taken back on A: B refuses again within the bound
    expect(
      (await admin(`/api/v1/role-assignments/${assignmentId}`, { method: 'DELETE' })).status,
    ).toBe(204);
    took = await waitUntil(async () => (await send(bUrl, operator.token)) === 403);
    expect(took).toBeLessThan(BOUND_MS);
  });

  it('serves a new layer, type or policy on the other gateway after a 304 from its cache', async () => {
    const secret = await warmDevice('cache-cfg-1');
    const publish = async (scope: string, key: string, config: unknown) =>
      expect(
        (await admin(`/api/v1/config/${scope}/${key}`, { method: 'PUT', body: json(config) }))
          .status,
      ).toBe(200);
    const poll = (path: string, etag?: string) =>
      signedGet(bUrl, 'cache-cfg-1', secret, path, etag ? { 'if-none-match': etag } : {});
    const changedWithin = async (path: string, etag: string) => {
      let body: Record<string, unknown> = {};
      const took = await waitUntil(async () => {
        const res = await poll(path, etag);
        if (res.status === 304) return false;
        expect(res.status).toBe(200);
        body = (await res.json()) as Record<string, unknown>;
        return true;
      });
      expect(took).toBeLessThan(BOUND_MS);
      return body;
    };

    await publish('fleet', '*', { tip: { enabled: false } });
    const config = '/api/v1/devices/cache-cfg-1/config';
    const first = await poll(config);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect((await poll(config, etag)).status).toBe(304); // from B's memory from now on
    expect((await poll(config, etag)).status).toBe(304);

    // a fleet layer published on A
    await publish('fleet', '*', { tip: { enabled: true } });
    const fleet = await changedWithin(config, etag);
    expect(fleet.config).toEqual({ tip: { enabled: true } });

    // the device's type changed on A selects another type layer
    await publish('device_type', 'kiosk', { receipt: 'short' });
    const before = (await poll(config)).headers.get('etag')!;
    expect((await poll(config, before)).status).toBe(304);
    const patched = await admin('/api/v1/devices/cache-cfg-1', {
      method: 'PATCH',
      body: json({ device_type: 'kiosk' }),
    });
    expect(patched.status).toBe(200);
    const typed = await changedWithin(config, before);
    expect(typed.config).toEqual({ tip: { enabled: true }, receipt: 'short' });

    // a fraud policy created on A
    const rules = '/api/v1/config/fraud-rules';
    const noRules = (await poll(rules)).headers.get('etag')!;
    expect((await poll(rules, noRules)).status).toBe(304);
    const created = await admin('/api/v1/policies', {
      method: 'POST',
      body: json({
        name: 'cache-velocity',
        policy_type: 'FRAUD',
        rules: [{ field: 'amount_minor', op: 'gt', value: 50000, action: 'review' }],
      }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const fraud = await changedWithin(rules, noRules);
    expect(fraud.policies).toEqual([{ name: 'cache-velocity', version: 1 }]);
  });

  /**
   * Registered, and the registration's notification heard by B: it would otherwise drop what
   * B's upgrade has just read, and B would read the device again.
   */
  const registeredOnB = async (deviceId: string) => {
    const heard = new Promise<void>((resolve) =>
      b.context.changes.onChange((change) => {
        if (change?.kind === 'devices' && change.deviceIds.includes(deviceId)) resolve();
      }),
    );
    const secret = await register(deviceId);
    await heard;
    return secret;
  };

  /** A DIAGNOSTIC command for `deviceId` created through B (so B pushes it if it can). */
  const createOnB = async (deviceId: string) => {
    const created = await b.context.app.inject({
      method: 'POST',
      url: `/api/v1/devices/${deviceId}/commands`,
      headers: { authorization: `Bearer ${a.adminToken}`, 'content-type': 'application/json' },
      payload: json({ command_type: 'DIAGNOSTIC', payload: { checks: ['link'] } }),
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ command_id: string; status: string }>();
  };

  it('opens the socket of a device with nothing to resume without a statement of its commands', async () => {
    // B keeps and uses nothing while it cannot vouch that it hears changes in time (its own
    // announcements late by more than 2 s, as on a loaded machine): a handshake then reads
    // again and resumes, rightly. Only a handshake during which B vouched throughout counts.
    let attempt = 0;
    let deviceId = '';
    let device: Awaited<ReturnType<typeof connectDevice>> | undefined;
    while (device === undefined) {
      deviceId = `cache-nothing-${++attempt}`;
      const secret = await registeredOnB(deviceId);
      bStatements.length = 0;
      let opened: Awaited<ReturnType<typeof connectDevice>> | undefined;
      const held = await trustHeld(b, async () => {
        opened = await connectDevice(bUrl, deviceId, secret);
        opened.send({ type: 'hello' });
        await opened.next('welcome');
      });
      if (held) device = opened;
      else {
        await opened?.close();
        expect(attempt, 'B lost its trust during every attempt').toBeLessThan(3);
      }
    }
    try {
      // the upgrade's credential read said there was nothing to resume: the hello ran no
      // redelivery and no delivery
      const reads = bStatements.filter((s) => s.includes('secret_ciphertext'));
      expect(reads).toHaveLength(1);
      expect(reads[0]).toContain('device_commands');
      expect(
        bStatements.filter(
          (s) => s.includes('device_commands') && !s.includes('secret_ciphertext'),
        ),
      ).toEqual([]);
      // and the session is idle at once: a new command is created DELIVERED and pushed
      const created = await createOnB(deviceId);
      expect(created.status).toBe('DELIVERED');
      expect(await device.next('command')).toMatchObject({
        command: { command_id: created.command_id },
      });
    } finally {
      await device.close();
    }
  });

  it('resumes the commands created on the other gateway between a cold upgrade and its hello', async () => {
    const secret = await registeredOnB('cache-cold-hello-2');
    const touched = vi.spyOn(b.context.quietDevices, 'touched');
    const device = await connectDevice(bUrl, 'cache-cold-hello-2', secret);
    try {
      await device.challenge; // the upgrade (and its credential read) is over
      const created = await admin('/api/v1/devices/cache-cold-hello-2/commands', {
        method: 'POST',
        body: json({ command_type: 'DIAGNOSTIC', payload: { checks: ['link'] } }),
      });
      expect(created.status).toBe(201);
      const { command_id: commandId } = (await created.json()) as { command_id: string };
      // B hears the creation before the hello: its read is stale, the hello must resume
      await vi.waitFor(() => expect(touched).toHaveBeenCalledWith('cache-cold-hello-2'));
      device.send({ type: 'hello' });
      await device.next('welcome');
      expect(await device.next('command')).toMatchObject({ command: { command_id: commandId } });
    } finally {
      touched.mockRestore();
      await device.close();
    }
  });

  /** `deviceId`'s socket on `base`, past its hello. */
  const helloed = async (base: string, deviceId: string, secret: string) => {
    const device = await connectDevice(base, deviceId, secret);
    device.send({ type: 'hello' });
    await device.next('welcome');
    return device;
  };

  /** Close `device` and wait until B's session of it has left the device quiet. */
  const leaveQuietOnB = async (
    device: Awaited<ReturnType<typeof connectDevice>>,
    deviceId: string,
  ) => {
    const read = vi.spyOn(b.context.quietDevices, 'read');
    try {
      await device.close();
      await vi.waitFor(() => expect(read).toHaveBeenCalledWith(deviceId, expect.any(Number), true));
    } finally {
      read.mockRestore();
    }
  };

  it('says hello again without a statement of its commands after a session that left nothing to resume', async () => {
    const deviceId = 'cache-left-quiet-1';
    const secret = await registeredOnB(deviceId);
    // a session that was pushed a command and acked it
    const first = await helloed(bUrl, deviceId, secret);
    const pushed = await createOnB(deviceId);
    expect(pushed.status).toBe('DELIVERED');
    expect(await first.next('command')).toMatchObject({
      command: { command_id: pushed.command_id },
    });
    first.send({ type: 'ack', command_id: pushed.command_id, status: 'EXECUTED' });
    expect(await first.next('acked')).toMatchObject({ command_id: pushed.command_id });
    await leaveQuietOnB(first, deviceId);

    // B keeps and uses nothing while it cannot vouch that it hears changes in time: only a
    // reconnect during which B vouched throughout counts
    let again: Awaited<ReturnType<typeof connectDevice>> | undefined;
    bStatements.length = 0;
    const held = await trustHeld(b, async () => {
      again = await helloed(bUrl, deviceId, secret);
    });
    try {
      if (held) expect(bStatements.filter((s) => s.includes('device_commands'))).toEqual([]);
      // and the session is idle at once: a new command is created DELIVERED and pushed
      const next = await createOnB(deviceId);
      expect(next.status).toBe('DELIVERED');
      expect(await again!.next('command')).toMatchObject({
        command: { command_id: next.command_id },
      });
    } finally {
      await again?.close();
    }
  });

  /**
   * Close `device` without acking `commandId`, wait until B hears that the device has
   * something to resume, and expect B to push the command again on the device's next hello.
   */
  const expectPushedAgainOnB = async (
    device: Awaited<ReturnType<typeof connectDevice>>,
    deviceId: string,
    secret: string,
    commandId: string,
  ) => {
    const touched = vi.spyOn(b.context.quietDevices, 'touched');
    try {
      await device.close();
      await vi.waitFor(() => expect(touched).toHaveBeenCalledWith(deviceId));
    } finally {
      touched.mockRestore();
    }
    const again = await helloed(bUrl, deviceId, secret);
    try {
      expect(await again.next('command')).toMatchObject({ command: { command_id: commandId } });
    } finally {
      await again.close();
    }
  };

  it('pushes again on the next hello a command its previous session pushed and the device did not ack', async () => {
    const deviceId = 'cache-left-unacked-1';
    const secret = await registeredOnB(deviceId);
    const first = await helloed(bUrl, deviceId, secret);
    const pushed = await createOnB(deviceId);
    expect(await first.next('command')).toMatchObject({
      command: { command_id: pushed.command_id },
    });
    // the session says it left a command unacked: B hears its own notification
    await expectPushedAgainOnB(first, deviceId, secret, pushed.command_id);
  });

  it('pushes again on the next hello a command another gateway pushed and the device did not ack', async () => {
    const deviceId = 'cache-left-unacked-2';
    const secret = await registeredOnB(deviceId);
    // B's session ends with nothing to resume: B holds the device quiet
    await leaveQuietOnB(await helloed(bUrl, deviceId, secret), deviceId);
    // the device goes to A, is pushed a command there and leaves without acking it
    const onA = await helloed(a.url, deviceId, secret);
    const created = await admin(`/api/v1/devices/${deviceId}/commands`, {
      method: 'POST',
      body: json({ command_type: 'DIAGNOSTIC', payload: { checks: ['link'] } }),
    });
    expect(created.status).toBe(201);
    const pushed = (await created.json()) as { command_id: string; status: string };
    expect(pushed.status).toBe('DELIVERED'); // A's own push: no notification for B
    expect(await onA.next('command')).toMatchObject({ command: { command_id: pushed.command_id } });
    // A tells the gateways that the device left a command unacked; B drops its entry
    await expectPushedAgainOnB(onA, deviceId, secret, pushed.command_id);
  });

  it('keeps nothing while its LISTEN connection is lost, and caches again once it is back', async () => {
    const secret = await warmDevice('cache-lost-1');
    // B's listening connection: the one of its pool's connections whose last statement is LISTEN
    const killed = await sql<{ pid: number }>`
      SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE pid = ANY(${[...bPids]}) AND query LIKE 'LISTEN %'`.execute(a.handle.store.db);
    expect(killed.rows).toHaveLength(1);
    await waitUntil(() => Promise.resolve(!b.context.changes.trusted()));

    // a rotation B cannot hear of: it reads through, so it refuses the old secret at once
    const res = await admin('/api/v1/devices/cache-lost-1/rotate-secret', {
      method: 'POST',
      body: json({ grace_period_seconds: 0 }),
    });
    expect(res.status).toBe(200);
    expect(b.context.changes.trusted()).toBe(false);
    expect(await status(bUrl, 'cache-lost-1', secret)).toBe(401);

    // once LISTEN holds again B trusts its caches, and hears the next rotation
    await waitUntil(() => Promise.resolve(b.context.changes.trusted()));
    const fresh = ((await res.json()) as { device_secret: string }).device_secret;
    expect(await status(bUrl, 'cache-lost-1', fresh)).toBe(200);
    expect((await admin('/api/v1/devices/cache-lost-1', { method: 'DELETE' })).status).toBe(204);
    const took = await waitUntil(async () => (await status(bUrl, 'cache-lost-1', fresh)) === 401);
    expect(took).toBeLessThan(BOUND_MS);
  });

  // last: B hears nothing afterwards
  it('stops serving from memory once its notifications stop coming back, with no error seen', async () => {
    const secret = await warmDevice('cache-quiet-1');
    // B's listening connection goes quiet without an error (a stalled or half-open link):
    // its caches are not told, but its own nonce announcements stop coming back
    await b.context.listener!.close();
    expect(b.context.changes.trusted()).toBe(true);
    await waitUntil(() => Promise.resolve(!b.context.auth.nonces.readsFromMemory()), 5_000);
    // a deletion B never hears of: it no longer answers from memory, so it refuses at once
    expect((await admin('/api/v1/devices/cache-quiet-1', { method: 'DELETE' })).status).toBe(204);
    expect(await status(bUrl, 'cache-quiet-1', secret)).toBe(401);
  });
});

describe.skipIf(!postgres)('an unchanged poll answered from memory on PostgreSQL', () => {
  let a: TestGateway;
  let cStore: CloudStore;
  let c: Gateway;
  let cUrl: string;
  /** Every statement C's pool runs (C serves the configuration routes only, no background work). */
  const statements: string[] = [];

  beforeAll(async () => {
    a = await startTestGateway(postgres!);
    cStore = asCloud(
      await openStore(process.env.DATABASE_URL!, {
        postgres: { schema: a.handle.location, maxConnections: 2 },
      }),
    );
    recordStatements(cStore, statements);
    c = await createGateway({
      store: cStore,
      keys: a.keys,
      runtime: a.gateway.context.runtime,
      routes: [registerConfigRoutes],
      // the rule list (empty) is read once, not again during the test
      rateLimits: { ruleRefreshMs: 600_000 },
      wasmStorageDir: mkdtempSync(join(tmpdir(), 'saffron-wasm-')),
    });
    cUrl = await c.listen(0);
    // the credentials read ahead as C starts are read before any statement is counted
    await c.warmed;
  });
  afterAll(async () => {
    await c.close();
    await cStore.close();
    await a.close();
  });

  it("runs no statement but the nonce's for a 304 of the configuration or the fraud rules", async () => {
    // the registration's notification reaches C after the commit: wait for it, or it could
    // drop what C's first poll below has just read
    const heard = new Promise<void>((resolve) =>
      c.context.changes.onChange((change) => {
        if (change?.kind === 'devices' && change.deviceIds.includes('cache-sql-1')) resolve();
      }),
    );
    const res = await a.asUser(a.adminToken, '/api/v1/devices/register', {
      method: 'POST',
      body: json({
        device_id: 'cache-sql-1',
        device_name: 'x',
        device_type: 'pos',
        location: 'lab',
      }),
    });
    const { device_secret: secret } = (await res.json()) as { device_secret: string };
    await heard;
    for (const path of ['/api/v1/devices/cache-sql-1/config', '/api/v1/config/fraud-rules']) {
      const poll = (headers: Record<string, string> = {}) =>
        fetch(`${cUrl}${path}`, {
          headers: {
            ...headers,
            ...deviceAuthHeaders('cache-sql-1', secret, {
              method: 'GET',
              pathWithQuery: path,
              body: '',
            }),
          },
        });
      statements.length = 0;
      const first = await poll();
      expect(first.status).toBe(200);
      // the counting sees the statements that built the document
      expect(statements.some((s) => /policies|device_configs/.test(s))).toBe(true);
      statements.length = 0;
      const again = await poll({ 'if-none-match': first.headers.get('etag')! });
      expect(again.status).toBe(304);
      // the replay check still records the nonce (gateway/auth/nonces.ts); nothing else runs
      expect(statements.filter((s) => !s.includes('device_request_nonces'))).toEqual([]);
    }
  });

  it('reads the credentials of devices that arrive together in one statement', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `cache-cold-${i}`);
    for (const id of ids)
      await a.gateway.context.store.cloud
        .insertInto('edge_devices')
        .values({
          device_id: id,
          device_name: id,
          device_type: 'pos',
          location: 'lab',
          secret_ciphertext: a.keys.seal(`secret-of-${id}`),
        })
        .execute();
    const cold = createCredentialCache(cStore, a.keys, () => true);
    statements.length = 0;
    const now = Date.now();
    const accepted = await Promise.all(
      ids.map((id) => cold.verify(id, now, (secrets) => secrets.includes(`secret-of-${id}`))),
    );
    expect(accepted).toEqual(ids.map(() => true));
    expect(statements.filter((s) => s.includes('secret_ciphertext'))).toHaveLength(1);
    // an unknown device among known ones is refused alone
    expect(await cold.verify('cache-cold-none', now, (secrets) => secrets.length > 0)).toBe(false);
  });
});
