/**
 * Control-plane changes besides commands leave rows in `command_audit_log`: registration (by
 * an admin token or a registration key), registry changes, secret rotation and deletion,
 * each naming who did it and written in the same transaction as the change. Also: an
 * operator replacing a device's metadata keeps what the system keeps there (the status
 * actor's snapshot and the metrics report).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const json = (value: unknown) => JSON.stringify(value);

for (const dialect of CLOUD_DIALECTS) {
  describe(`control-plane audit on ${dialect.name}`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(dialect);
    });
    afterAll(async () => {
      await gw.close();
    });

    const auditOf = async (deviceId: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .selectAll()
          .where('device_id', '=', deviceId)
          .orderBy('id')
          .execute()
      ).map((row) => ({
        event: row.event_type,
        actor: row.actor,
        role: row.actor_role,
        command_id: row.command_id,
        details: gw.handle.store.codec.parseJson(row.details) as Record<string, unknown>,
      }));

    it('records registration, update, rotation and deletion with their actors', async () => {
      const created = await gw.asUser(gw.adminToken, '/api/v1/devices/register', {
        method: 'POST',
        body: json({
          device_id: 'audit-1',
          device_name: 'Till 1',
          device_type: 'pos',
          location: 'store-9',
        }),
      });
      expect(created.status).toBe(201);
      const { device_secret: secret } = (await created.json()) as { device_secret: string };

      const operator = await gw.token('operator');
      const patched = await gw.asUser(operator, '/api/v1/devices/audit-1', {
        method: 'PATCH',
        body: json({ location: 'store-10' }),
      });
      expect(patched.status).toBe(200);

      const rotated = await gw.asDevice(
        'audit-1',
        secret,
        '/api/v1/devices/audit-1/rotate-secret',
        {
          method: 'POST',
          body: json({}),
        },
      );
      expect(rotated.status).toBe(200);

      expect(
        (await gw.asUser(gw.adminToken, '/api/v1/devices/audit-1', { method: 'DELETE' })).status,
      ).toBe(204);

      const rows = await auditOf('audit-1');
      expect(rows.map((r) => [r.event, r.actor, r.role])).toEqual([
        ['DEVICE_REGISTERED', 'test admin', 'admin'],
        ['DEVICE_UPDATED', 'test operator', 'operator'],
        ['DEVICE_SECRET_ROTATED', 'audit-1', 'device'],
        ['DEVICE_DELETED', 'test admin', 'admin'],
      ]);
      expect(rows.every((r) => r.command_id === null)).toBe(true);
      expect(rows[1]!.details).toEqual({ fields: ['location'] });
      // the secret itself is never audited
      expect(JSON.stringify(rows)).not.toContain(secret);
    });

    it('names the registration key that registered a device, and audits nothing when registration fails', async () => {
      const keyResponse = await gw.asUser(gw.adminToken, '/api/v1/registration-keys', {
        method: 'POST',
        body: json({ name: 'audit key', device_type: 'kiosk' }),
      });
      expect(keyResponse.status).toBe(201);
      const key = (await keyResponse.json()) as { key_id: string; registration_key: string };
      const register = (deviceType: string) =>
        fetch(`${gw.url}/api/v1/devices/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: json({
            device_id: `audit-key-${deviceType}`,
            device_name: 'Kiosk',
            device_type: deviceType,
            location: 'lobby',
            registration_key: key.registration_key,
          }),
        });
      expect((await register('pos')).status).toBe(403);
      expect(await auditOf('audit-key-pos')).toEqual([]);
      expect((await register('kiosk')).status).toBe(201);
      expect(await auditOf('audit-key-kiosk')).toMatchObject([
        {
          event: 'DEVICE_REGISTERED',
          actor: `registration-key:${key.key_id}`,
          role: 'registration_key',
        },
      ]);
    });

    it("keeps the status actor's snapshot and the metrics report when metadata is replaced", async () => {
      await gw.insertDevice('audit-meta');
      const actorSnapshot = { status: 'active', value: 'online', context: { sessions: 1 } };
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({
          metadata: json({
            owner: 'old',
            actor: actorSnapshot,
            metrics: { disk_usage_percent: 12 },
          }),
        })
        .where('device_id', '=', 'audit-meta')
        .execute();
      const patched = await gw.asUser(gw.adminToken, '/api/v1/devices/audit-meta', {
        method: 'PATCH',
        body: json({ metadata: { owner: 'new' } }),
      });
      expect(patched.status).toBe(200);
      const row = await gw.handle.store.cloud
        .selectFrom('edge_devices')
        .select('metadata')
        .where('device_id', '=', 'audit-meta')
        .executeTakeFirstOrThrow();
      expect(gw.handle.store.codec.parseJson(row.metadata)).toEqual({
        owner: 'new',
        actor: actorSnapshot,
        metrics: { disk_usage_percent: 12 },
      });
    });
  });
}
