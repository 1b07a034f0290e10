/**
 * Commands over real HTTP with a hand-moved clock: creation (typed payloads, roles), the
 * polling fallback, idempotent acks, redelivery after the ack timeout until max_retries,
 * expiry — and the audit trail of each.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deviceAuthHeaders } from '../../gateway/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { testClock } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Command extends Json {
  command_id: string;
  status: string;
  retry_count: number;
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`commands on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: TestGateway;
    /** Sends the commands: an admin, as high-risk commands by an operator wait for approval. */
    let sender: string;
    let secret: string;
    let otherSecret: string;

    const create = (body: Json, deviceId = 'pos-1', token = sender) =>
      gw.asUser(token, `/api/v1/devices/${deviceId}/commands`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
    /** A request signed by a device at the gateway's (moved) time. */
    const asDevice = (deviceId: string, key: string, path: string, method = 'GET', body?: Json) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      return fetch(`${gw.url}${path}`, {
        method,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...deviceAuthHeaders(deviceId, key, {
            method,
            pathWithQuery: path,
            body: text,
            timestamp: clock.now().toISOString(),
          }),
        },
        ...(body !== undefined ? { body: text } : {}),
      });
    };
    const poll = async (deviceId = 'pos-1', key = secret) => {
      const res = await asDevice(deviceId, key, `/api/v1/devices/${deviceId}/commands`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { commands: Command[] }).commands;
    };
    const ack = (commandId: string, body: Json, deviceId = 'pos-1', key = secret) =>
      asDevice(
        deviceId,
        key,
        `/api/v1/devices/${deviceId}/commands/${commandId}/ack`,
        'POST',
        body,
      );
    const row = (commandId: string) =>
      gw.handle.store.cloud
        .selectFrom('device_commands')
        .selectAll()
        .where('command_id', '=', commandId)
        .executeTakeFirstOrThrow();
    const trail = async (commandId: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select(['event_type', 'actor', 'actor_role', 'device_id', 'details'])
          .where('command_id', '=', commandId)
          .orderBy('id')
          .execute()
      ).map((r) => r.event_type);

    beforeAll(async () => {
      gw = await startTestGateway(dialect, {
        now: clock.now,
        routes: [
          commandRoutes({
            ackTimeoutMs: 10_000,
            sweepIntervalMs: 20,
            retryBaseMs: 1_000,
            retryMaxMs: 1_000,
            heartbeatIntervalMs: 3_600_000,
          }),
        ],
      });
      sender = gw.adminToken;
      secret = await gw.insertDevice('pos-1');
      otherSecret = await gw.insertDevice('pos-2');
    });
    afterAll(async () => {
      await gw.close();
    });

    it('documents its routes in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      expect(Object.keys(doc.paths['/api/v1/devices/{id}/commands']!).sort()).toEqual([
        'get',
        'post',
      ]);
      expect(doc.paths['/api/v1/devices/{id}/commands/{command_id}/ack']).toHaveProperty('post');
      expect(doc.paths['/api/v1/devices/{id}/ws']).toHaveProperty('get');
    });

    it('creates typed commands for operators only, validating each payload by path', async () => {
      const res = await create({ command_type: 'REBOOT', payload: { delay_seconds: 5 } });
      expect(res.status).toBe(201);
      const command = (await res.json()) as Command;
      expect(command).toMatchObject({
        device_id: 'pos-1',
        command_type: 'REBOOT',
        payload: { delay_seconds: 5 },
        status: 'PENDING',
        retry_count: 0,
        max_retries: 3,
        created_by: 'test admin',
      });
      const audit = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .selectAll()
        .where('command_id', '=', command.command_id)
        .execute();
      expect(audit).toMatchObject([
        {
          event_type: 'COMMAND_CREATED',
          actor: 'test admin',
          actor_role: 'admin',
          device_id: 'pos-1',
        },
      ]);

      clock.advance(1); // commands created in one millisecond have no defined order
      const wasm = await create({
        command_type: 'sync_wasm',
        payload: { binary_hash: 'f'.repeat(64) },
      });
      expect(((await wasm.json()) as Command).command_type).toBe('sync_wasm');
      const bad = await create({
        command_type: 'UPDATE_WORKFLOW',
        payload: { workflow_type: 'x' },
      });
      expect(bad.status).toBe(422);
      expect(
        ((await bad.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
      ).toEqual(['$.payload.definition_yaml']);
      expect((await create({ command_type: 'SELF_DESTRUCT' })).status).toBe(422);
      expect(
        (await create({ command_type: 'REBOOT', payload: { reason: '4111111111111111' } })).status,
      ).toBe(422);
      expect((await create({ command_type: 'REBOOT' }, 'no-such-device')).status).toBe(404);
      expect(
        (await create({ command_type: 'REBOOT' }, 'pos-1', await gw.token('viewer'))).status,
      ).toBe(403);
      const device = await asDevice('pos-1', secret, '/api/v1/devices/pos-1/commands', 'POST', {
        command_type: 'REBOOT',
      });
      expect(device.status).toBe(403);
    });

    it('hands due commands to a polling device once, and lets operators list without changing them', async () => {
      const delivered = await poll();
      expect(delivered.map((c) => [c.command_type, c.status])).toEqual([
        ['REBOOT', 'DELIVERED'],
        ['sync_wasm', 'DELIVERED'],
      ]);
      expect(await poll()).toEqual([]);
      const listed = await gw.asUser(
        await gw.token('viewer'),
        '/api/v1/devices/pos-1/commands?status=DELIVERED',
      );
      expect(((await listed.json()) as { commands: Command[] }).commands).toHaveLength(2);
      expect(await poll()).toEqual([]);
      // a device sees only its own
      expect((await asDevice('pos-2', otherSecret, '/api/v1/devices/pos-1/commands')).status).toBe(
        403,
      );
      expect(await poll('pos-2', otherSecret)).toEqual([]);
      expect(await trail(delivered[0]!.command_id)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
      ]);
    });

    it('records acks idempotently: a repeat is 200, a contradiction 409, a stranger 404', async () => {
      const [reboot, wasm] = (
        (await (
          await gw.asUser(sender, '/api/v1/devices/pos-1/commands?status=DELIVERED')
        ).json()) as { commands: Command[] }
      ).commands.reverse();
      const done = await ack(reboot!.command_id, { status: 'EXECUTED', result: { uptime_s: 3 } });
      expect(done.status).toBe(200);
      expect(await done.json()).toMatchObject({ status: 'EXECUTED', result: { uptime_s: 3 } });
      const again = await ack(reboot!.command_id, { status: 'EXECUTED', result: { uptime_s: 3 } });
      expect(again.status).toBe(200);
      const contradiction = await ack(reboot!.command_id, { status: 'FAILED', error: 'no' });
      expect(contradiction.status).toBe(409);
      expect(await contradiction.json()).toMatchObject({
        code: 'ACK_CONFLICT',
        status: 'EXECUTED',
      });
      const stranger = await ack(wasm!.command_id, { status: 'EXECUTED' }, 'pos-2', otherSecret);
      expect(stranger.status).toBe(404);
      expect(
        (
          await asDevice(
            'pos-2',
            otherSecret,
            `/api/v1/devices/pos-1/commands/${wasm!.command_id}/ack`,
            'POST',
            { status: 'EXECUTED' },
          )
        ).status,
      ).toBe(403);
      const failed = await ack(wasm!.command_id, { status: 'FAILED', error: 'hash mismatch' });
      expect(await failed.json()).toMatchObject({ status: 'FAILED', error: 'hash mismatch' });
      expect((await row(reboot!.command_id)).executed_at).not.toBeNull();
      expect(await trail(reboot!.command_id)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'COMMAND_EXECUTED',
      ]);
      expect(await trail(wasm!.command_id)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'COMMAND_FAILED',
      ]);
      // the ack's audit row: who, and the status it left, with the error of a failure
      const ackRow = async (commandId: string) => {
        const rows = await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select(['event_type', 'actor', 'actor_role', 'device_id', 'details'])
          .where('command_id', '=', commandId)
          .orderBy('id', 'desc')
          .limit(1)
          .execute();
        const found = rows[0]!;
        return { ...found, details: gw.handle.store.codec.parseJson(found.details) };
      };
      expect(await ackRow(reboot!.command_id)).toEqual({
        event_type: 'COMMAND_EXECUTED',
        actor: 'pos-1',
        actor_role: 'device',
        device_id: 'pos-1',
        details: { previous_status: 'DELIVERED', retry_count: 0 },
      });
      expect((await ackRow(wasm!.command_id)).details).toEqual({
        previous_status: 'DELIVERED',
        retry_count: 0,
        error: 'hash mismatch',
      });
    });

    it('records an ack holding a card number with that part withheld, so the command settles', async () => {
      const pan = '4111111111111111';
      const first = (await (
        await create({ command_type: 'DIAGNOSTIC', payload: {} })
      ).json()) as Command;
      const second = (await (
        await create({ command_type: 'DIAGNOSTIC', payload: {} })
      ).json()) as Command;
      const leaky = { status: 'EXECUTED', result: { logs: [`card ${pan} declined`] } };
      const done = await ack(first.command_id, leaky);
      expect(done.status).toBe(200);
      const body = await done.text();
      expect(body).not.toContain(pan);
      expect(JSON.parse(body)).toMatchObject({
        status: 'EXECUTED',
        result: { withheld: 'CARD_DATA_IN_CLEAR', path: '$.result.logs[0]' },
      });
      // the device sending it again is a repeat, not a conflict
      expect((await ack(first.command_id, leaky)).status).toBe(200);
      const failed = await ack(second.command_id, { status: 'FAILED', error: `bad card ${pan}` });
      const failedBody = (await failed.json()) as { status: string; error: string };
      expect(failedBody.status).toBe('FAILED');
      expect(failedBody.error).toContain('withheld');
      for (const id of [first.command_id, second.command_id]) {
        expect(JSON.stringify(await row(id))).not.toContain(pan);
        expect(
          JSON.stringify(
            await gw.handle.store.cloud
              .selectFrom('command_audit_log')
              .selectAll()
              .where('command_id', '=', id)
              .execute(),
          ),
        ).not.toContain(pan);
      }
    });

    it('redelivers an unacked command after the ack timeout until max_retries, then fails it', async () => {
      const created = (await (
        await create({ command_type: 'DIAGNOSTIC', max_retries: 1 }, 'pos-2')
      ).json()) as Command;
      expect((await poll('pos-2', otherSecret)).map((c) => c.command_id)).toEqual([
        created.command_id,
      ]);

      clock.advance(10_001);
      await vi.waitFor(async () => expect((await row(created.command_id)).status).toBe('PENDING'));
      const retried = await row(created.command_id);
      expect(retried.retry_count).toBe(1);
      expect(retried.delivered_at).toBeNull();
      // the retry waits for its backoff (0.5–1 s here)
      expect(await poll('pos-2', otherSecret)).toEqual([]);
      clock.advance(1_000);
      const again = await poll('pos-2', otherSecret);
      expect(again.map((c) => [c.command_id, c.retry_count])).toEqual([[created.command_id, 1]]);

      clock.advance(10_001);
      await vi.waitFor(async () => expect((await row(created.command_id)).status).toBe('FAILED'));
      expect((await row(created.command_id)).error).toBe('max retries exceeded');
      expect(await trail(created.command_id)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'COMMAND_RETRIED',
        'COMMAND_DELIVERED',
        'COMMAND_FAILED',
      ]);
      // the device ran it after all: too late, the command has ended
      expect(
        (await ack(created.command_id, { status: 'EXECUTED' }, 'pos-2', otherSecret)).status,
      ).toBe(409);
    });

    it('resets a device a dead gateway left ONLINE once it has been quiet too long', async () => {
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({
          status: 'ONLINE',
          last_seen: new Date(clock.now().getTime() - 3_600_000).toISOString(),
        })
        .where('device_id', '=', 'pos-2')
        .execute();
      await vi.waitFor(async () => {
        const device = await gw.handle.store.cloud
          .selectFrom('edge_devices')
          .select('status')
          .where('device_id', '=', 'pos-2')
          .executeTakeFirstOrThrow();
        expect(device.status).toBe('OFFLINE');
      });
    });

    it('expires commands that were not finished in time', async () => {
      const pending = (await (
        await create({ command_type: 'UPDATE_CONFIG', expires_in_seconds: 5 }, 'pos-2')
      ).json()) as Command;
      const delivered = (await (
        await create({ command_type: 'SYNC_TRANSACTIONS', expires_in_seconds: 5 }, 'pos-2')
      ).json()) as Command;
      expect(pending.expires_at).not.toBeNull();
      // deliver both, ack neither, then let them expire
      expect(await poll('pos-2', otherSecret)).toHaveLength(2);
      clock.advance(5_001);
      for (const c of [pending, delivered])
        await vi.waitFor(async () => expect((await row(c.command_id)).status).toBe('FAILED'));
      expect((await row(pending.command_id)).error).toBe('expired');
      expect(await trail(delivered.command_id)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'COMMAND_EXPIRED',
      ]);
      const stillPending = (await (
        await create({ command_type: 'UPDATE_CONFIG', expires_in_seconds: 1 }, 'pos-2')
      ).json()) as Command;
      clock.advance(1_001);
      await vi.waitFor(async () =>
        expect((await row(stillPending.command_id)).status).toBe('FAILED'),
      );
      expect(await poll('pos-2', otherSecret)).toEqual([]);
    });
  });
}
