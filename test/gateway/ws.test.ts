/**
 * The device WebSocket over real connections on loopback: the signed upgrade and its
 * refusals, command push and ack (a command for an idle socket created DELIVERED and pushed
 * at once), resume after a dropped connection (no command lost, one ack), device status through the device actor, bad frames, heartbeats, back-pressure, and
 * — on PostgreSQL — a push routed to a device connected to another gateway process.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createGateway, deviceAuthHeaders, type Gateway } from '../../gateway/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { openStore, asCloud, type CloudStore } from '../../runtime/index.js';
import { insertCommandWith } from '../../gateway/commands/store/commands/insertCommand.js';
import {
  connectDevice,
  legacySocketHeaders,
  refusedUpgrade,
  socketHeaders,
  testClock,
  type DeviceSocket,
} from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Command extends Json {
  command_id: string;
  status: string;
  retry_count: number;
}

const QUIET = { heartbeatIntervalMs: 3_600_000, sweepIntervalMs: 3_600_000 };

for (const dialect of CLOUD_DIALECTS) {
  describe(`device WebSocket on ${dialect.name}`, () => {
    let gw: TestGateway;
    let operator: string;
    /** Sends the commands: an admin, as high-risk commands by an operator wait for approval. */
    let sender: string;
    const secrets: Record<string, string> = {};
    const create = async (deviceId: string, body: Json, via = gw.url): Promise<Command> => {
      const res = await fetch(`${via}/api/v1/devices/${deviceId}/commands`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${sender}` },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(201);
      return (await res.json()) as Command;
    };
    const connect = (deviceId: string, url = gw.url) =>
      connectDevice(url, deviceId, secrets[deviceId]!);
    const hello = async (device: DeviceSocket) => {
      device.send({ type: 'hello' });
      return device.next('welcome');
    };
    const commandRow = (commandId: string) =>
      gw.handle.store.cloud
        .selectFrom('device_commands')
        .selectAll()
        .where('command_id', '=', commandId)
        .executeTakeFirstOrThrow();
    const statusOf = async (deviceId: string, store = gw.handle.store) =>
      (
        await store.cloud
          .selectFrom('edge_devices')
          .select('status')
          .where('device_id', '=', deviceId)
          .executeTakeFirstOrThrow()
      ).status;
    const trail = async (commandId: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select('event_type')
          .where('command_id', '=', commandId)
          .orderBy('id')
          .execute()
      ).map((r) => r.event_type);

    beforeAll(async () => {
      gw = await startTestGateway(dialect, { routes: [commandRoutes(QUIET)] });
      operator = await gw.token('operator');
      sender = gw.adminToken;
      for (const id of ['ws-1', 'ws-2', 'ws-3', 'ws-4', 'ws-5', 'ws-6', 'ws-7', 'ws-8'])
        secrets[id] = await gw.insertDevice(id);
    });
    afterAll(async () => {
      await gw.close();
    });

    it('refuses bad upgrades before opening a socket: 401, 403, 404, 426 for plain GETs', async () => {
      const path = '/api/v1/devices/ws-1/ws';
      const none = await refusedUpgrade(gw.url, path, {});
      expect(none).toMatchObject({ status: 401, body: { code: 'AUTH_REQUIRED' } });
      const forged = await refusedUpgrade(gw.url, path, socketHeaders('ws-1', 'wrong-secret'));
      expect(forged).toMatchObject({ status: 401, body: { code: 'INVALID_SIGNATURE' } });
      // the deprecated nonce upgrade: its nonce is single-use (the challenge scheme's replays
      // are test/security/replay.test.ts's)
      const headers = legacySocketHeaders('ws-1', secrets['ws-1']!);
      const once = new WebSocket(`${gw.url.replace('http', 'ws')}${path}`, { headers });
      await new Promise((resolve) => once.on('open', resolve));
      once.close();
      const replayed = await refusedUpgrade(gw.url, path, headers);
      expect(replayed).toMatchObject({ status: 401, body: { code: 'REPLAYED_REQUEST' } });
      // an upgrade without a nonce must be signed without one
      const nonceless = { ...headers };
      delete nonceless['x-saffron-nonce'];
      expect(await refusedUpgrade(gw.url, path, nonceless)).toMatchObject({
        status: 401,
        body: { code: 'INVALID_SIGNATURE' },
      });
      await vi.waitFor(async () => expect(await statusOf('ws-1')).toBe('OFFLINE'));
      const other = await refusedUpgrade(
        gw.url,
        path,
        socketHeaders('ws-2', secrets['ws-2']!, path),
      );
      expect(other).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
      const user = await refusedUpgrade(gw.url, path, { authorization: `Bearer ${operator}` });
      expect(user.status).toBe(403);
      const plain = await fetch(`${gw.url}${path}`, {
        headers: deviceAuthHeaders('ws-1', secrets['ws-1']!, {
          method: 'GET',
          pathWithQuery: path,
          body: '',
        }),
      });
      expect(plain.status).toBe(426);
      // what is no device socket is refused as problem+json too, before any authentication
      const elsewhere = await refusedUpgrade(gw.url, '/api/v1/devices/ws-1', {});
      expect(elsewhere).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
      expect(elsewhere.headers['content-type']).toBe('application/problem+json');
      const badId = await refusedUpgrade(gw.url, '/api/v1/devices/%E0%A4%A/ws', {});
      expect(badId).toMatchObject({ status: 400, body: { code: 'BAD_URL' } });
      const longId = await refusedUpgrade(gw.url, `/api/v1/devices/${'x'.repeat(600)}/ws`, {});
      expect(longId).toMatchObject({ status: 414, body: { code: 'PATH_PARAMETER_TOO_LONG' } });
    });

    it('sends the 101 and the challenge in one write', async () => {
      // every write of a TCP socket to the kernel goes through net.Socket's _writeGeneric
      type Counted = Socket & { _writeGeneric: (...args: unknown[]) => unknown };
      let writes = 0;
      const server = gw.gateway.app.server;
      const counting = (socket: Counted) => {
        const write = socket._writeGeneric;
        socket._writeGeneric = function (...args: unknown[]) {
          writes++;
          return write.apply(this, args);
        };
      };
      server.once('connection', counting);
      const device = await connect('ws-6');
      expect(await device.challenge).toMatch(/^[\w-]{43}$/);
      expect(writes).toBe(1);
      await device.close();
    });

    it('pushes a command over the socket and records the ack; ONLINE while connected', async () => {
      const device = await connect('ws-1');
      const welcome = await hello(device);
      expect(welcome).toMatchObject({ type: 'welcome', max_message_bytes: 64 * 1024 });
      await vi.waitFor(async () => expect(await statusOf('ws-1')).toBe('ONLINE'));
      const created = await create('ws-1', {
        command_type: 'REBOOT',
        payload: { delay_seconds: 1 },
      });
      const pushed = await device.next('command');
      expect(pushed.command).toMatchObject({
        command_id: created.command_id,
        command_type: 'REBOOT',
        payload: { delay_seconds: 1 },
        status: 'DELIVERED',
      });
      device.send({
        type: 'ack',
        command_id: created.command_id,
        status: 'EXECUTED',
        result: { ok: true },
      });
      expect(await device.next('acked')).toEqual({
        type: 'acked',
        command_id: created.command_id,
        status: 'EXECUTED',
        repeated: false,
      });
      expect(await commandRow(created.command_id)).toMatchObject({
        status: 'EXECUTED',
        result: { ok: true },
      });
      // an idle socket gets the command created DELIVERED and pushed at once, a busy one
      // (still resuming on a loaded machine) by the wake-up: the same trail either way
      expect(['DELIVERED', 'PENDING']).toContain(created.status);
      const audit = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type', 'actor', 'details', 'source_ip'])
        .where('command_id', '=', created.command_id)
        .orderBy('id')
        .execute();
      expect(audit.map((a) => a.event_type)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'COMMAND_EXECUTED',
      ]);
      expect(audit[1]!.actor).toMatch(/^gateway:/);
      // the ack's row names the device and the address its socket came from
      expect(audit[2]).toMatchObject({ actor: 'ws-1', source_ip: '127.0.0.1' });
      expect(gw.handle.store.codec.parseJson(audit[1]!.details)).toEqual({
        via: 'websocket',
        retry_count: 0,
      });
      await device.close();
      await vi.waitFor(async () => expect(await statusOf('ws-1')).toBe('OFFLINE'));
    });

    it('creates a command DELIVERED for an idle socket, PENDING behind one still waiting', async () => {
      const deliverer = { actor: 'gateway:test', role: 'system' as const };
      const make = (commandType: string) =>
        insertCommandWith(
          gw.handle.store,
          {
            commandId: randomUUID(),
            deviceId: 'ws-7',
            commandType,
            payload: {},
            maxRetries: 3,
            expiresAt: null,
          },
          { actor: 'op', role: 'operator' },
          'test-node',
          new Date(),
          deliverer,
        );
      const first = await make('DIAGNOSTIC');
      expect(first).toMatchObject({ status: 'DELIVERED' });
      expect(await trail(first!.commandId)).toEqual(['COMMAND_CREATED', 'COMMAND_DELIVERED']);
      await gw.handle.store.cloud
        .updateTable('device_commands')
        .set({ status: 'PENDING' })
        .where('command_id', '=', first!.commandId)
        .execute();
      const second = await make('REBOOT');
      expect(second).toMatchObject({ status: 'PENDING', deliveredAt: null });
      expect(await trail(second!.commandId)).toEqual(['COMMAND_CREATED']);
    });

    it('creates a command PENDING behind one still waiting, and pushes it by the wake-up', async () => {
      const device = await connect('ws-8');
      await hello(device);
      const waiting = await create('ws-8', { command_type: 'DIAGNOSTIC', payload: {} });
      await device.next('command'); // pushed at once, or by the wake-up of a busy session
      // then make it wait for a retry, not yet due
      await gw.handle.store.cloud
        .updateTable('device_commands')
        .set({
          status: 'PENDING',
          next_attempt_at: gw.handle.store.codec.time(new Date(Date.now() + 3_600_000)),
        })
        .where('command_id', '=', waiting.command_id)
        .execute();
      const next = await create('ws-8', { command_type: 'REBOOT', payload: {} });
      expect(next.status).toBe('PENDING');
      expect((await device.next('command')).command).toMatchObject({
        command_id: next.command_id,
        status: 'DELIVERED',
      });
      expect(await trail(next.command_id)).toEqual(['COMMAND_CREATED', 'COMMAND_DELIVERED']);
      await device.close();
    });

    it('pushes what is pending on hello, and again what was never acked after a reconnect', async () => {
      const waiting = await create('ws-2', { command_type: 'UPDATE_CONFIG' });
      let device = await connect('ws-2');
      await hello(device);
      const first = await device.next('command');
      expect((first.command as Command).command_id).toBe(waiting.command_id);
      // the connection drops before the device acks
      device.ws.terminate();
      await device.closed;
      expect((await commandRow(waiting.command_id)).status).toBe('DELIVERED');

      device = await connect('ws-2');
      await hello(device);
      const again = (await device.next('command')).command as Command;
      expect(again).toMatchObject({ command_id: waiting.command_id, retry_count: 1 });
      device.send({ type: 'ack', command_id: waiting.command_id, status: 'EXECUTED' });
      expect(await device.next('acked')).toMatchObject({ repeated: false });
      // the device acks again (it could not know the first got through): harmless
      device.send({ type: 'ack', command_id: waiting.command_id, status: 'EXECUTED' });
      expect(await device.next('acked')).toMatchObject({ status: 'EXECUTED', repeated: true });
      expect(await trail(waiting.command_id)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'COMMAND_DELIVERED',
        'COMMAND_EXECUTED',
      ]);
      // a second hello in one session does not push again
      device.send({ type: 'hello' });
      await device.next('welcome');
      device.send({ type: 'heartbeat' });
      await device.close();
      expect((await commandRow(waiting.command_id)).retry_count).toBe(1);
    });

    it('does not push before hello, and replaces an older session of the same device', async () => {
      const older = await connect('ws-3');
      const created = await create('ws-3', { command_type: 'DIAGNOSTIC' });
      expect((await commandRow(created.command_id)).status).toBe('PENDING');
      // the newer socket replaces the older once it has proven itself
      const newer = await connect('ws-3');
      await hello(newer);
      expect((await older.closed).code).toBe(4001);
      expect(((await newer.next('command')).command as Command).command_id).toBe(
        created.command_id,
      );
      await vi.waitFor(async () => expect(await statusOf('ws-3')).toBe('ONLINE'));
      await newer.close();
      await vi.waitFor(async () => expect(await statusOf('ws-3')).toBe('OFFLINE'));
    });

    it('answers bad frames with errors and closes on binary or oversized ones', async () => {
      const device = await connect('ws-4');
      await hello(device);
      device.ws.send('{not json');
      expect(await device.next('error')).toMatchObject({ code: 'MALFORMED_FRAME' });
      device.send({ type: 'ack', command_id: 'nope', status: 'DONE' });
      expect((await device.next('error')).message).toContain('$.command_id');
      device.send({
        type: 'ack',
        command_id: '00000000-0000-4000-8000-000000000000',
        status: 'EXECUTED',
      });
      expect(await device.next('error')).toMatchObject({ code: 'COMMAND_NOT_FOUND' });
      device.ws.send(Buffer.from([1, 2, 3]), { binary: true });
      expect((await device.closed).code).toBe(1003);
      const big = await connect('ws-4');
      big.send({ type: 'heartbeat', padding: 'x'.repeat(70 * 1024) });
      expect((await big.closed).code).toBe(1009);
    });

    it('sends heartbeats and closes a device that stops answering them', async () => {
      const hb = await startTestGateway(dialect, {
        routes: [
          commandRoutes({
            // long enough that a loaded machine still answers in time
            heartbeatIntervalMs: 250,
            missedHeartbeats: 3,
            sweepIntervalMs: 3_600_000,
          }),
        ],
      });
      try {
        const secret = await hb.insertDevice('hb-1');
        const device = await connectDevice(hb.url, 'hb-1', secret);
        device.send({ type: 'hello' });
        for (let i = 0; i < 5; i++) {
          await device.next('heartbeat');
          device.send({ type: 'heartbeat' });
        }
        expect(device.ws.readyState).toBe(WebSocket.OPEN);
        // silence from now on
        expect(await device.closed).toMatchObject({ code: 4000 });
        await vi.waitFor(
          async () => {
            const row = await hb.handle.store.cloud
              .selectFrom('edge_devices')
              .select(['status', 'last_seen'])
              .where('device_id', '=', 'hb-1')
              .executeTakeFirstOrThrow();
            expect(row.status).toBe('OFFLINE');
            expect(row.last_seen).not.toBeNull();
          },
          { timeout: 10_000 },
        );
      } finally {
        await hb.close();
      }
    });

    it('sends no heartbeat within half an interval of its last write to the device', async () => {
      // the gateway's clock stands still while the heartbeat wheel turns on real time
      const clock = testClock();
      const hb = await startTestGateway(dialect, {
        now: clock.now,
        routes: [
          commandRoutes({
            heartbeatIntervalMs: 200,
            missedHeartbeats: 1_000,
            sweepIntervalMs: 3_600_000,
          }),
        ],
      });
      try {
        const secret = await hb.insertDevice('hb-quiet');
        const device = await connectDevice(hb.url, 'hb-quiet', secret, clock.now());
        let heartbeats = 0;
        device.ws.on('message', (data: Buffer) => {
          if ((JSON.parse(data.toString('utf8')) as Json).type === 'heartbeat') heartbeats++;
        });
        device.send({ type: 'hello' });
        await device.next('welcome');
        // five turns of the wheel, each visiting the session, with the welcome just written
        await sleep(1_000);
        expect(heartbeats).toBe(0);
        clock.advance(100); // half an interval after the welcome
        await vi.waitFor(() => expect(heartbeats).toBe(1), { timeout: 5_000 });
        // the heartbeat is a write too: the next is due half an interval after it
        await sleep(600);
        expect(heartbeats).toBe(1);
      } finally {
        await hb.close();
      }
    });

    it('stops pushing to a device that does not read, keeps commands PENDING, and cuts it off', async () => {
      const bp = await startTestGateway(dialect, {
        routes: [
          commandRoutes({
            heartbeatIntervalMs: 25,
            missedHeartbeats: 10_000,
            maxBufferedBytes: 256 * 1024,
            // long enough that the reading device below is not cut off on a loaded machine
            backpressureGraceMs: 1_500,
            deliveryBatch: 1,
            sweepIntervalMs: 3_600_000,
          }),
        ],
      });
      try {
        const secret = await bp.insertDevice('bp-1');
        const token = bp.adminToken; // an operator's UPDATE_WORKFLOW would wait for approval
        let device = await connectDevice(bp.url, 'bp-1', secret);
        device.send({ type: 'hello' });
        await device.next('welcome');
        device.ws.pause();
        const yaml = `# ${'x'.repeat(200 * 1024)}`;
        const ids: string[] = [];
        for (let i = 0; i < 60; i++) {
          const res = await fetch(`${bp.url}/api/v1/devices/bp-1/commands`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify({
              command_type: 'UPDATE_WORKFLOW',
              payload: { workflow_type: `wf_${i}`, definition_yaml: yaml },
              max_retries: 10,
            }),
          });
          ids.push(((await res.json()) as Command).command_id);
        }
        const statuses = async () =>
          (
            await bp.handle.store.cloud
              .selectFrom('device_commands')
              .select('status')
              .where('device_id', '=', 'bp-1')
              .execute()
          ).map((r) => r.status);
        // the server gives up on the session: the device goes OFFLINE
        await vi.waitFor(
          async () => expect(await statusOf('bp-1', bp.handle.store)).toBe('OFFLINE'),
          { timeout: 10_000 },
        );
        const held = await statuses();
        expect(held.filter((s) => s === 'PENDING').length).toBeGreaterThan(0);
        expect(held.filter((s) => s === 'DELIVERED').length).toBeGreaterThan(0);
        device.ws.terminate();

        // a reading device gets every command, the undelivered and the unacked ones
        device = await connectDevice(bp.url, 'bp-1', secret);
        device.send({ type: 'hello' });
        const seen = new Set<string>();
        const cut = device.closed.then(({ code }) => {
          throw new Error(`the reading device was cut off (${code})`);
        });
        while (seen.size < ids.length) {
          const command = (await Promise.race([device.next('command'), cut])).command as Command;
          seen.add(command.command_id);
          device.send({ type: 'ack', command_id: command.command_id, status: 'EXECUTED' });
        }
        expect([...seen].sort()).toEqual([...ids].sort());
        // acks are applied asynchronously: give a loaded machine time
        await vi.waitFor(
          async () => expect((await statuses()).every((s) => s === 'EXECUTED')).toBe(true),
          { timeout: 15_000 },
        );
        await device.close();
      } finally {
        await bp.close();
      }
    });

    it('closes its device sockets when it shuts down, and records the devices OFFLINE', async () => {
      const leaving = await startTestGateway(dialect, { routes: [commandRoutes(QUIET)] });
      try {
        const secret = await leaving.insertDevice('leaving-1');
        const device = await connectDevice(leaving.url, 'leaving-1', secret);
        await hello(device);
        // the server's close waits for every connection: the gateway must end the sockets first
        await leaving.gateway.close();
        expect((await device.closed).code).toBe(1001);
        expect(await statusOf('leaving-1', leaving.handle.store)).toBe('OFFLINE');
      } finally {
        await leaving.close();
      }
    });

    it.runIf(dialect.name === 'postgres')(
      'routes a push to the device socket held by another gateway process',
      async () => {
        let storeB: CloudStore | undefined;
        let gatewayB: Gateway | undefined;
        try {
          storeB = asCloud(
            await openStore(process.env.DATABASE_URL!, {
              postgres: { schema: gw.handle.location, maxConnections: 4 },
            }),
          );
          gatewayB = await createGateway({
            store: storeB,
            keys: gw.keys,
            routes: [commandRoutes(QUIET)],
          });
          const urlB = await gatewayB.listen(0);
          const device = await connect('ws-5', urlB);
          await hello(device);
          await vi.waitFor(async () => expect(await statusOf('ws-5')).toBe('ONLINE'));
          const created = await create('ws-5', { command_type: 'REBOOT' }); // through gateway A
          const pushed = (await device.next('command')).command as Command;
          expect(pushed.command_id).toBe(created.command_id);
          device.send({ type: 'ack', command_id: created.command_id, status: 'EXECUTED' });
          await device.next('acked');
          expect((await commandRow(created.command_id)).status).toBe('EXECUTED');
          await device.close();
        } finally {
          await gatewayB?.close();
          await storeB?.close();
        }
      },
    );
  });
}
