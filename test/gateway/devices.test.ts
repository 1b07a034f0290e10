/**
 * The device registry over real HTTP on loopback: registration by admin token and by
 * registration key (and every way that fails), credentials shown once and stored only
 * protected, roles and cross-device access, listing with filters and keyset pages, secret
 * rotation with a grace period (time moved through the gateway's clock), and the metrics
 * report with its Prometheus gauges.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceAuthHeaders } from '../../gateway/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

interface Registered {
  device_id: string;
  api_key: string;
  device_secret: string;
}

const json = (value: unknown) => JSON.stringify(value);

for (const dialect of CLOUD_DIALECTS) {
  describe(`device registry on ${dialect.name}`, () => {
    let gw: TestGateway;
    let offsetMs = 0;
    const now = () => new Date(Date.now() + offsetMs);

    beforeAll(async () => {
      gw = await startTestGateway(dialect, { now });
    });
    afterAll(async () => {
      await gw.close();
    });

    /** A signed device request at the gateway's (possibly moved) time. */
    const asDeviceNow = (
      deviceId: string,
      secret: string,
      path: string,
      init: RequestInit = {},
    ) => {
      const body = typeof init.body === 'string' ? init.body : '';
      return fetch(`${gw.url}${path}`, {
        ...init,
        headers: {
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...deviceAuthHeaders(deviceId, secret, {
            method: init.method ?? 'GET',
            pathWithQuery: path,
            body,
            timestamp: now().toISOString(),
          }),
        },
      });
    };

    const register = async (body: Record<string, unknown>, token = gw.adminToken) => {
      const res = await gw.asUser(token, '/api/v1/devices/register', {
        method: 'POST',
        body: json({ device_name: 'till', device_type: 'POS', location: 'store 1', ...body }),
      });
      return res;
    };
    const registered = async (body: Record<string, unknown>) => {
      const res = await register(body);
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Registered;
    };
    const registerWithKey = (body: Record<string, unknown>) =>
      fetch(`${gw.url}/api/v1/devices/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: json({ device_name: 'till', device_type: 'POS', location: 'store 1', ...body }),
      });
    const createKey = async (body: Record<string, unknown>) => {
      const res = await gw.asUser(gw.adminToken, '/api/v1/registration-keys', {
        method: 'POST',
        body: json({ name: 'batch', ...body }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as { key_id: string; registration_key: string; use_count: number };
    };

    it('registers with an admin token, shows the credentials once and stores them protected', async () => {
      const res = await register({ device_id: 'reg-admin-1', metadata: { lane: 3 } });
      expect(res.status).toBe(201);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const created = (await res.json()) as Registered;
      expect(Object.keys(created).sort()).toEqual(['api_key', 'device_id', 'device_secret']);
      expect(created.device_id).toBe('reg-admin-1');
      expect(created.api_key).toMatch(/^sdk_[A-Za-z0-9_-]{43}$/);
      expect(created.device_secret.length).toBeGreaterThanOrEqual(43);

      // reads never return a credential
      const read = await gw.asUser(gw.adminToken, '/api/v1/devices/reg-admin-1');
      expect(read.status).toBe(200);
      const text = await read.text();
      expect(text).not.toContain(created.device_secret);
      expect(text).not.toContain(created.api_key);
      expect(JSON.parse(text)).toMatchObject({
        device_id: 'reg-admin-1',
        device_name: 'till',
        device_type: 'POS',
        location: 'store 1',
        status: 'OFFLINE',
        metadata: { lane: 3 },
        metrics: null,
        registration_key_id: null,
      });

      // the database holds the secret sealed and the api_key as its hash only
      const row = await gw.handle.store.cloud
        .selectFrom('edge_devices')
        .select(['secret_ciphertext', 'api_key'])
        .where('device_id', '=', 'reg-admin-1')
        .executeTakeFirstOrThrow();
      expect(row.secret_ciphertext).toMatch(/^v1:/);
      expect(row.secret_ciphertext).not.toContain(created.device_secret);
      expect(gw.keys.open(row.secret_ciphertext!)).toBe(created.device_secret);
      expect(row.api_key).toBe(createHash('sha256').update(created.api_key).digest('hex'));

      // the returned secret signs requests that authenticate
      const self = await gw.asDevice(
        'reg-admin-1',
        created.device_secret,
        '/api/v1/devices/reg-admin-1',
      );
      expect(self.status).toBe(200);
      const wrong = await gw.asDevice('reg-admin-1', 'x'.repeat(43), '/api/v1/devices/reg-admin-1');
      expect(wrong.status).toBe(401);
    });

    it('generates a device id when none is given, and answers a taken id with 409', async () => {
      const generated = await registered({});
      expect(generated.device_id).toMatch(/^dev-[0-9a-f-]{36}$/);
      await registered({ device_id: 'reg-dup' });
      const again = await register({ device_id: 'reg-dup' });
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ code: 'DEVICE_EXISTS' });
    });

    it('registers with a registration key, within its type, uses and lifetime', async () => {
      const key = await createKey({ device_type: 'POS', max_uses: 2 });
      expect(key.registration_key).toMatch(/^srk_/);
      expect(key.use_count).toBe(0);
      // listed without the key
      const listed = await gw.asUser(gw.adminToken, '/api/v1/registration-keys');
      const listText = await listed.text();
      expect(listText).toContain(key.key_id);
      expect(listText).not.toContain(key.registration_key);

      // the key is stored as its hash only
      const row = await gw.handle.store.cloud
        .selectFrom('registration_keys')
        .select('key_hash')
        .where('key_id', '=', key.key_id)
        .executeTakeFirstOrThrow();
      expect(row.key_hash).toBe(createHash('sha256').update(key.registration_key).digest('hex'));

      // a device type the key does not cover: 403, and the use is given back
      const otherType = await registerWithKey({
        device_id: 'reg-key-atm',
        device_type: 'ATM',
        registration_key: key.registration_key,
      });
      expect(otherType.status).toBe(403);
      expect(await otherType.json()).toMatchObject({ code: 'REGISTRATION_KEY_SCOPE' });

      const first = await registerWithKey({
        device_id: 'reg-key-1',
        registration_key: key.registration_key,
      });
      expect(first.status).toBe(201);
      const firstDevice = (await first.json()) as Registered;
      // a taken id does not use the key up
      const duplicate = await registerWithKey({
        device_id: 'reg-key-1',
        registration_key: key.registration_key,
      });
      expect(duplicate.status).toBe(409);
      const second = await registerWithKey({
        device_id: 'reg-key-2',
        registration_key: key.registration_key,
      });
      expect(second.status).toBe(201);
      // used up
      const third = await registerWithKey({
        device_id: 'reg-key-3',
        registration_key: key.registration_key,
      });
      expect(third.status).toBe(401);
      expect(await third.json()).toMatchObject({ code: 'INVALID_REGISTRATION_KEY' });

      const device = await gw.asDevice(
        'reg-key-1',
        firstDevice.device_secret,
        '/api/v1/devices/reg-key-1',
      );
      expect(await device.json()).toMatchObject({ registration_key_id: key.key_id });
    });

    it('refuses a wrong, malformed, revoked or expired key, and a missing credential', async () => {
      const codeOf = async (res: Response, status: number) => {
        expect(res.status).toBe(status);
        return ((await res.json()) as { code: string }).code;
      };
      expect(
        await codeOf(await registerWithKey({ registration_key: `srk_${'A'.repeat(43)}` }), 401),
      ).toBe('INVALID_REGISTRATION_KEY');
      expect(await codeOf(await registerWithKey({ registration_key: 'guess' }), 401)).toBe(
        'INVALID_REGISTRATION_KEY',
      );
      expect(await codeOf(await registerWithKey({}), 401)).toBe('AUTH_REQUIRED');

      const revoked = await createKey({});
      const revoke = await gw.asUser(gw.adminToken, `/api/v1/registration-keys/${revoked.key_id}`, {
        method: 'DELETE',
      });
      expect(revoke.status).toBe(204);
      expect(
        await codeOf(await registerWithKey({ registration_key: revoked.registration_key }), 401),
      ).toBe('INVALID_REGISTRATION_KEY');

      const expiring = await createKey({ expires_in_seconds: 60 });
      offsetMs = 61_000;
      try {
        expect(
          await codeOf(await registerWithKey({ registration_key: expiring.registration_key }), 401),
        ).toBe('INVALID_REGISTRATION_KEY');
      } finally {
        offsetMs = 0;
      }
      const fresh = await registerWithKey({
        device_id: 'reg-key-late',
        registration_key: expiring.registration_key,
      });
      expect(fresh.status).toBe(201);
    });

    it('lets only admins register devices and manage registration keys', async () => {
      const operator = await gw.token('operator');
      const viaOperator = await register({ device_id: 'reg-op' }, operator);
      expect(viaOperator.status).toBe(403);
      const keys = await gw.asUser(operator, '/api/v1/registration-keys');
      expect(keys.status).toBe(403);
      const badToken = await register({ device_id: 'reg-bad' }, `saf_${'x'.repeat(43)}`);
      expect(badToken.status).toBe(401);
      const device = await registered({ device_id: 'reg-dev-registrar' });
      const body = json({ device_name: 'n', device_type: 'POS', location: 'l' });
      const viaDevice = await gw.asDevice(
        device.device_id,
        device.device_secret,
        '/api/v1/devices/register',
        { method: 'POST', body },
      );
      expect(viaDevice.status).toBe(403);
    });

    it('answers invalid bodies with 422 naming each path', async () => {
      const res = await gw.asUser(gw.adminToken, '/api/v1/devices/register', {
        method: 'POST',
        body: json({
          device_id: 'has spaces',
          device_type: 'P O S',
          location: '',
          metadata: { metrics: {} },
          extra: 1,
        }),
      });
      expect(res.status).toBe(422);
      const problem = (await res.json()) as { code: string; errors: { path: string }[] };
      expect(problem.code).toBe('VALIDATION_FAILED');
      const paths = problem.errors.map((e) => e.path);
      for (const path of [
        '$.device_id',
        '$.device_name',
        '$.device_type',
        '$.location',
        '$.metadata',
        '$',
      ])
        expect(paths).toContain(path);
    });

    it('lets viewers read, operators update, admins delete, and nobody else', async () => {
      await registered({ device_id: 'roles-1' });
      const viewer = await gw.token('viewer');
      const operator = await gw.token('operator');
      expect((await gw.asUser(viewer, '/api/v1/devices/roles-1')).status).toBe(200);
      const patch = (token: string) =>
        gw.asUser(token, '/api/v1/devices/roles-1', {
          method: 'PATCH',
          body: json({ location: 'store 9', metadata: { lane: 1 } }),
        });
      expect((await patch(viewer)).status).toBe(403);
      const updated = await patch(operator);
      expect(updated.status).toBe(200);
      expect(await updated.json()).toMatchObject({ location: 'store 9', metadata: { lane: 1 } });
      const empty = await gw.asUser(operator, '/api/v1/devices/roles-1', {
        method: 'PATCH',
        body: '{}',
      });
      expect(empty.status).toBe(422);
      const remove = (token: string) =>
        gw.asUser(token, '/api/v1/devices/roles-1', { method: 'DELETE' });
      expect((await remove(viewer)).status).toBe(403);
      expect((await remove(operator)).status).toBe(403);
      expect((await remove(gw.adminToken)).status).toBe(204);
      expect((await gw.asUser(viewer, '/api/v1/devices/roles-1')).status).toBe(404);
      expect((await remove(gw.adminToken)).status).toBe(404);
    });

    it('keeps each device to its own resources', async () => {
      const a = await registered({ device_id: 'cross-a' });
      await registered({ device_id: 'cross-b' });
      const asA = (path: string, init: RequestInit & { body?: string } = {}) =>
        gw.asDevice(a.device_id, a.device_secret, path, init);
      expect((await asA('/api/v1/devices/cross-b')).status).toBe(403);
      expect((await asA('/api/v1/devices/cross-b/rotate-secret', { method: 'POST' })).status).toBe(
        403,
      );
      const report = json({
        disk_usage_percent: 1,
        memory_usage_mb: 1,
        pending_transactions: 0,
        last_sync: new Date().toISOString(),
        network_available: true,
      });
      expect(
        (await asA('/api/v1/devices/cross-b/metrics', { method: 'POST', body: report })).status,
      ).toBe(403);
      expect((await asA('/api/v1/devices')).status).toBe(403);
      expect(
        (await asA('/api/v1/devices/cross-a', { method: 'PATCH', body: json({ location: 'x' }) }))
          .status,
      ).toBe(403);
      expect((await asA('/api/v1/devices/cross-a')).status).toBe(200);
    });

    it('lists devices by status, type and location in keyset pages', async () => {
      for (const [id, type, location] of [
        ['list-1', 'KIOSK', 'hall'],
        ['list-2', 'KIOSK', 'hall'],
        ['list-3', 'KIOSK', 'yard'],
        ['list-4', 'ROBOT', 'hall'],
      ] as const)
        await registered({ device_id: id, device_type: type, location });
      const ids = async (query: string) => {
        const res = await gw.asUser(gw.adminToken, `/api/v1/devices?${query}`);
        expect(res.status).toBe(200);
        return (await res.json()) as {
          devices: { device_id: string }[];
          next_cursor: string | null;
        };
      };
      expect((await ids('device_type=KIOSK')).devices.map((d) => d.device_id)).toEqual([
        'list-1',
        'list-2',
        'list-3',
      ]);
      expect(
        (await ids('device_type=KIOSK&location=hall')).devices.map((d) => d.device_id),
      ).toEqual(['list-1', 'list-2']);
      expect((await ids('status=ONLINE&device_type=KIOSK')).devices).toEqual([]);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await ids(
          `location=hall&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.devices.length).toBeLessThanOrEqual(2);
        seen.push(...page.devices.map((d) => d.device_id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen.filter((id) => id.startsWith('list-'))).toEqual(['list-1', 'list-2', 'list-4']);

      const tooMany = await gw.asUser(gw.adminToken, '/api/v1/devices?limit=501');
      expect(tooMany.status).toBe(400);
      expect(await tooMany.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ path: '$.limit' }],
      });
      const badCursor = await gw.asUser(gw.adminToken, '/api/v1/devices?cursor=IyMj');
      expect(badCursor.status).toBe(400);
    });

    it('rotates a secret: the old one works through the grace period, then fails', async () => {
      const device = await registered({ device_id: 'rotate-1' });
      const path = '/api/v1/devices/rotate-1';
      const rotate = await gw.asUser(gw.adminToken, `${path}/rotate-secret`, {
        method: 'POST',
        body: json({ grace_period_seconds: 3600 }),
      });
      expect(rotate.status).toBe(200);
      expect(rotate.headers.get('cache-control')).toBe('no-store');
      const rotated = (await rotate.json()) as {
        device_secret: string;
        previous_secret_expires_at: string;
        rotated_at: string;
      };
      expect(rotated.device_secret).not.toBe(device.device_secret);
      expect(Date.parse(rotated.previous_secret_expires_at) - Date.parse(rotated.rotated_at)).toBe(
        3600_000,
      );
      // the secret is not readable afterwards
      const read = await (await gw.asUser(gw.adminToken, path)).text();
      expect(read).not.toContain(rotated.device_secret);

      try {
        expect((await asDeviceNow('rotate-1', device.device_secret, path)).status).toBe(200);
        expect((await asDeviceNow('rotate-1', rotated.device_secret, path)).status).toBe(200);
        offsetMs = 3_599_000;
        expect((await asDeviceNow('rotate-1', device.device_secret, path)).status).toBe(200);
        offsetMs = 3_601_000;
        const expired = await asDeviceNow('rotate-1', device.device_secret, path);
        expect(expired.status).toBe(401);
        expect(await expired.json()).toMatchObject({ code: 'INVALID_SIGNATURE' });
        expect((await asDeviceNow('rotate-1', rotated.device_secret, path)).status).toBe(200);
      } finally {
        offsetMs = 0;
      }
    });

    it('lets a device rotate its own secret, but only with its current secret', async () => {
      const device = await registered({ device_id: 'rotate-self' });
      const path = '/api/v1/devices/rotate-self/rotate-secret';
      const res = await gw.asDevice('rotate-self', device.device_secret, path, { method: 'POST' });
      expect(res.status).toBe(200);
      const rotated = (await res.json()) as {
        device_secret: string;
        previous_secret_expires_at: string;
        rotated_at: string;
      };
      // default grace: 24 h
      expect(Date.parse(rotated.previous_secret_expires_at) - Date.parse(rotated.rotated_at)).toBe(
        24 * 3600_000,
      );
      // the previous secret still authenticates, but cannot mint a new one
      const withOld = await gw.asDevice('rotate-self', device.device_secret, path, {
        method: 'POST',
      });
      expect(withOld.status).toBe(403);
      expect(await withOld.json()).toMatchObject({ code: 'CURRENT_SECRET_REQUIRED' });
      const operator = await gw.token('operator');
      expect((await gw.asUser(operator, path, { method: 'POST' })).status).toBe(403);
      const zeroGrace = await gw.asUser(gw.adminToken, path, {
        method: 'POST',
        body: json({ grace_period_seconds: 0 }),
      });
      expect(zeroGrace.status).toBe(200);
      // no grace: the secret it replaced stops working at once
      const replaced = await gw.asDevice(
        'rotate-self',
        rotated.device_secret,
        '/api/v1/devices/rotate-self',
      );
      expect(replaced.status).toBe(401);
      const bad = await gw.asUser(gw.adminToken, path, {
        method: 'POST',
        body: json({ grace_period_seconds: -1 }),
      });
      expect(bad.status).toBe(422);
      const missing = await gw.asUser(gw.adminToken, '/api/v1/devices/nobody/rotate-secret', {
        method: 'POST',
      });
      expect(missing.status).toBe(404);
    });

    it('stores a metrics report and exports the per-device gauges', async () => {
      const device = await registered({ device_id: 'metrics-1' });
      const report = {
        disk_usage_percent: 42.5,
        memory_usage_mb: 512,
        pending_transactions: 7,
        last_sync: '2024-05-01T10:00:00+02:00',
        network_available: false,
      };
      const post = (body: unknown) =>
        gw.asDevice('metrics-1', device.device_secret, '/api/v1/devices/metrics-1/metrics', {
          method: 'POST',
          body: json(body),
        });
      expect((await post(report)).status).toBe(204);

      const read = (await (
        await gw.asUser(gw.adminToken, '/api/v1/devices/metrics-1')
      ).json()) as Record<string, unknown>;
      expect(read.metrics).toMatchObject(report);
      expect(read.last_sync).toBe('2024-05-01T08:00:00.000Z');
      expect(read.last_seen).not.toBeNull();
      // operator metadata changes keep the report
      await gw.asUser(gw.adminToken, '/api/v1/devices/metrics-1', {
        method: 'PATCH',
        body: json({ metadata: { shelf: 'b' } }),
      });
      const after = (await (
        await gw.asUser(gw.adminToken, '/api/v1/devices/metrics-1')
      ).json()) as Record<string, unknown>;
      expect(after.metadata).toEqual({ shelf: 'b' });
      expect(after.metrics).toMatchObject(report);

      const scrape = await (await gw.asUser(gw.adminToken, '/metrics')).text();
      expect(scrape).toContain('saffron_device_pending_transactions{device_id="metrics-1"} 7');
      expect(scrape).toContain('saffron_device_disk_usage_percent{device_id="metrics-1"} 42.5');
      expect(scrape).toContain('saffron_device_network_available{device_id="metrics-1"} 0');

      const invalid = await post({
        disk_usage_percent: 120,
        memory_usage_mb: -1,
        pending_transactions: 1.5,
        last_sync: 'yesterday',
        network_available: 'yes',
      });
      expect(invalid.status).toBe(422);
      const paths = ((await invalid.json()) as { errors: { path: string }[] }).errors.map(
        (e) => e.path,
      );
      expect(paths.sort()).toEqual([
        '$.disk_usage_percent',
        '$.last_sync',
        '$.memory_usage_mb',
        '$.network_available',
        '$.pending_transactions',
      ]);
      const byOperator = await gw.asUser(gw.adminToken, '/api/v1/devices/metrics-1/metrics', {
        method: 'POST',
        body: json(report),
      });
      expect(byOperator.status).toBe(403);

      // deleting the device drops its series
      await gw.asUser(gw.adminToken, '/api/v1/devices/metrics-1', { method: 'DELETE' });
      const later = await (await gw.asUser(gw.adminToken, '/metrics')).text();
      expect(later).not.toContain('device_id="metrics-1"');
    });

    it('documents the device routes in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      for (const path of [
        '/api/v1/devices/register',
        '/api/v1/devices',
        '/api/v1/devices/{device_id}',
        '/api/v1/devices/{device_id}/rotate-secret',
        '/api/v1/devices/{device_id}/metrics',
        '/api/v1/registration-keys',
      ])
        expect(Object.keys(doc.paths)).toContain(path);
    });
  });
}
