/**
 * Command batches over real HTTP and device sockets, on a hand-moved clock: a SEQUENTIAL
 * batch sends a device's next command only after its ack; PARALLEL sends everything at
 * once and ends PARTIALLY_FAILED when some fail (acks over the socket and over REST);
 * stop_on_failure skips what follows a failure; expiry and cancel settle a batch; roles and
 * validation; and the audit trail of each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceAuthHeaders } from '../../gateway/index.js';
import { SYSTEM_ACTOR } from '../../gateway/commands/store/commands/command.js';
import { expireCommands } from '../../gateway/commands/store/commands/expireCommands.js';
import { testClock } from '../support/device.js';
import { json, onlineDevice, startFleetGateway, type FleetGateway } from '../support/fleet.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Batch extends Json {
  batch_id: string;
  status: string;
  progress: Record<string, number>;
}
interface Pushed {
  command: { command_id: string; command_type: string; payload: Json };
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`command batches on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: FleetGateway;
    /** Sends the requests: an admin, as high-risk commands by an operator wait for approval. */
    let sender: string;
    let viewer: string;
    const secrets: Record<string, string> = {};

    const post = (path: string, body: unknown, token = sender) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const createBatch = async (body: Json): Promise<Batch> => {
      const res = await post('/api/v1/command-batches', body);
      expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
      return json<Batch>(res);
    };
    const getBatch = async (id: string): Promise<Batch> =>
      json<Batch>(await gw.asUser(viewer, `/api/v1/command-batches/${id}`));
    const rows = (batchId: string) =>
      gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['command_id', 'device_id', 'status', 'batch_sequence', 'command_type'])
        .where('batch_id', '=', batchId)
        .orderBy('batch_sequence')
        .execute();
    const audit = async (batchId: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select(['event_type', 'actor'])
          .where('batch_id', '=', batchId)
          .orderBy('id')
          .execute()
      ).map((r) => r.event_type);
    const restAck = (deviceId: string, commandId: string, body: Json) => {
      const path = `/api/v1/devices/${deviceId}/commands/${commandId}/ack`;
      const text = JSON.stringify(body);
      return fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...deviceAuthHeaders(deviceId, secrets[deviceId]!, {
            method: 'POST',
            pathWithQuery: path,
            body: text,
            timestamp: clock.now().toISOString(),
          }),
        },
        body: text,
      });
    };
    const poll = async (deviceId: string) => {
      const path = `/api/v1/devices/${deviceId}/commands`;
      const res = await fetch(`${gw.url}${path}`, {
        headers: deviceAuthHeaders(deviceId, secrets[deviceId]!, {
          method: 'GET',
          pathWithQuery: path,
          body: '',
          timestamp: clock.now().toISOString(),
        }),
      });
      expect(res.status).toBe(200);
      return (await json<{ commands: { command_id: string; command_type: string }[] }>(res))
        .commands;
    };

    beforeAll(async () => {
      gw = await startFleetGateway(dialect, clock);
      sender = gw.adminToken;
      viewer = await gw.token('viewer');
      for (const id of ['b-1', 'b-2', 'b-3', 'b-4', 'b-5']) secrets[id] = await gw.insertDevice(id);
    });
    afterAll(async () => {
      await gw.close();
    });

    it('refuses viewers, bad bodies, unknown devices and unknown batches', async () => {
      const body = {
        device_ids: ['b-1'],
        commands: [{ command_type: 'REBOOT', payload: { delay_seconds: 1 } }],
      };
      expect((await post('/api/v1/command-batches', body, viewer)).status).toBe(403);
      const bad = await post('/api/v1/command-batches', {
        device_ids: [],
        commands: [{ command_type: 'REBOOT', payload: { delay_seconds: 'soon' } }],
      });
      expect(bad.status).toBe(422);
      const problem = await json<{ code: string; errors: { path: string }[] }>(bad);
      expect(problem.code).toBe('VALIDATION_FAILED');
      expect(problem.errors.map((e) => e.path)).toEqual(
        expect.arrayContaining(['$.device_ids', '$.commands[0].payload.delay_seconds']),
      );
      const duplicate = await post('/api/v1/command-batches', {
        ...body,
        device_ids: ['b-1', 'b-1'],
      });
      expect(duplicate.status).toBe(422);
      const unknown = await post('/api/v1/command-batches', {
        ...body,
        device_ids: ['b-1', 'nope'],
      });
      expect(unknown.status).toBe(422);
      expect(await json(unknown)).toMatchObject({ code: 'UNKNOWN_DEVICES', device_ids: ['nope'] });
      const pan = await post('/api/v1/command-batches', {
        device_ids: ['b-1'],
        commands: [{ command_type: 'REBOOT', payload: { reason: 'card 4111111111111111' } }],
      });
      expect(await json(pan)).toMatchObject({ code: 'CARD_DATA_IN_CLEAR' });
      expect((await gw.asUser(viewer, '/api/v1/command-batches/not-a-uuid')).status).toBe(400);
      const missing = await gw.asUser(
        viewer,
        '/api/v1/command-batches/00000000-0000-4000-8000-000000000000',
      );
      expect(missing.status).toBe(404);
      expect(await json(missing)).toMatchObject({ code: 'BATCH_NOT_FOUND' });
      expect(
        await gw.handle.store.cloud.selectFrom('command_batches').select('batch_id').execute(),
      ).toEqual([]);
    });

    it('SEQUENTIAL: sends the second command only after the first one is acked', async () => {
      const device = await onlineDevice(gw.url, 'b-1', secrets['b-1']!, clock);
      const batch = await createBatch({
        name: 'reboot then diagnose',
        execution_mode: 'SEQUENTIAL',
        device_ids: ['b-1'],
        commands: [
          { command_type: 'REBOOT', payload: { delay_seconds: 1 } },
          { command_type: 'DIAGNOSTIC', payload: { upload_logs: true } },
        ],
      });
      expect(batch).toMatchObject({
        status: 'IN_PROGRESS',
        execution_mode: 'SEQUENTIAL',
        total_commands: 2,
        progress: { total: 2, PENDING: 1, WAITING: 1 },
      });
      const first = (await device.next('command')) as unknown as Pushed;
      expect(first.command).toMatchObject({
        command_type: 'REBOOT',
        payload: { delay_seconds: 1 },
      });
      // however often the driver looks, nothing more goes before the ack
      await gw.fleet.tick();
      expect(await rows(batch.batch_id)).toEqual([
        expect.objectContaining({ command_id: first.command.command_id, status: 'DELIVERED' }),
      ]);
      expect((await getBatch(batch.batch_id)).progress).toMatchObject({ DELIVERED: 1, WAITING: 1 });

      device.send({ type: 'ack', command_id: first.command.command_id, status: 'EXECUTED' });
      const second = (await device.next('command')) as unknown as Pushed;
      expect(second.command).toMatchObject({
        command_type: 'DIAGNOSTIC',
        payload: { upload_logs: true },
      });
      expect(await device.next('acked')).toMatchObject({ command_id: first.command.command_id });
      device.send({ type: 'ack', command_id: second.command.command_id, status: 'EXECUTED' });
      await device.next('acked');
      await gw.fleet.settle();
      const done = await getBatch(batch.batch_id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        completed_count: 2,
        failed_count: 0,
        progress: { EXECUTED: 2, total: 2 },
      });
      expect(done.completed_at).not.toBeNull();
      expect((await rows(batch.batch_id)).map((r) => r.batch_sequence)).toEqual([0, 1]);
      expect(await audit(batch.batch_id)).toEqual([
        'BATCH_CREATED',
        'COMMAND_CREATED',
        'COMMAND_CREATED',
        'BATCH_FINISHED',
      ]);
      await device.close();
    });

    it('PARALLEL: sends everything at once; a failure makes it PARTIALLY_FAILED', async () => {
      const device = await onlineDevice(gw.url, 'b-2', secrets['b-2']!, clock);
      const batch = await createBatch({
        execution_mode: 'PARALLEL',
        device_ids: ['b-2', 'b-3'],
        commands: [
          { command_type: 'SYNC_TRANSACTIONS', payload: {} },
          { command_type: 'UPDATE_CONFIG', payload: { force: true } },
        ],
      });
      expect(batch.progress).toMatchObject({ total: 4, PENDING: 4 });
      const pushed = [
        (await device.next('command')) as unknown as Pushed,
        (await device.next('command')) as unknown as Pushed,
      ];
      expect(pushed.map((p) => p.command.command_type).sort()).toEqual([
        'SYNC_TRANSACTIONS',
        'UPDATE_CONFIG',
      ]);
      for (const p of pushed)
        device.send({ type: 'ack', command_id: p.command.command_id, status: 'EXECUTED' });
      await device.next('acked');
      await device.next('acked');
      // b-3 polls over REST and acks there: one done, one failed
      const polled = await poll('b-3');
      expect(polled).toHaveLength(2);
      expect((await restAck('b-3', polled[0]!.command_id, { status: 'EXECUTED' })).status).toBe(
        200,
      );
      await gw.fleet.settle();
      expect((await getBatch(batch.batch_id)).status).toBe('IN_PROGRESS');
      const failed = await restAck('b-3', polled[1]!.command_id, {
        status: 'FAILED',
        error: 'disk full',
      });
      expect(failed.status).toBe(200);
      await gw.fleet.settle();
      expect(await getBatch(batch.batch_id)).toMatchObject({
        status: 'PARTIALLY_FAILED',
        completed_count: 3,
        failed_count: 1,
        progress: { EXECUTED: 3, FAILED: 1 },
      });
      const items = await json<{ items: Json[]; total: number }>(
        await gw.asUser(viewer, `/api/v1/command-batches/${batch.batch_id}/items?status=FAILED`),
      );
      expect(items).toMatchObject({ total: 1, items: [{ device_id: 'b-3', status: 'FAILED' }] });
      await device.close();
    });

    it('SEQUENTIAL with stop_on_failure: what follows a failure is SKIPPED', async () => {
      const batch = await createBatch({
        execution_mode: 'SEQUENTIAL',
        device_ids: ['b-4'],
        commands: [
          { command_type: 'REBOOT', payload: {} },
          { command_type: 'DIAGNOSTIC', payload: {} },
          { command_type: 'UPDATE_CONFIG', payload: {} },
        ],
      });
      const [first, ...rest] = await poll('b-4');
      expect(rest).toEqual([]);
      expect(first!.command_type).toBe('REBOOT');
      await restAck('b-4', first!.command_id, { status: 'FAILED', error: 'busy' });
      await gw.fleet.settle();
      expect(await getBatch(batch.batch_id)).toMatchObject({
        status: 'FAILED',
        progress: { FAILED: 1, SKIPPED: 2 },
      });
      expect(await rows(batch.batch_id)).toHaveLength(1);
      expect(await poll('b-4')).toEqual([]);
    });

    it('expired commands count as failures once the driver reconciles', async () => {
      const batch = await createBatch({
        device_ids: ['b-5'],
        commands: [{ command_type: 'REBOOT', payload: {}, expires_in_seconds: 60 }],
      });
      clock.advance(61_000);
      expect(await expireCommands(gw.handle.store, SYSTEM_ACTOR, clock.now())).toHaveLength(1);
      await gw.fleet.tick();
      expect(await getBatch(batch.batch_id)).toMatchObject({
        status: 'FAILED',
        progress: { FAILED: 1 },
      });
    });

    it('cancel stops undelivered commands and never sends the rest; a second cancel is 409', async () => {
      const batch = await createBatch({
        execution_mode: 'SEQUENTIAL',
        device_ids: ['b-5'],
        commands: [
          { command_type: 'REBOOT', payload: {} },
          { command_type: 'DIAGNOSTIC', payload: {} },
        ],
      });
      expect(
        (await post(`/api/v1/command-batches/${batch.batch_id}/cancel`, {}, viewer)).status,
      ).toBe(403);
      const res = await post(`/api/v1/command-batches/${batch.batch_id}/cancel`, {});
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({
        status: 'CANCELLED',
        progress: { CANCELLED: 2, total: 2 },
      });
      expect(await rows(batch.batch_id)).toEqual([
        expect.objectContaining({ status: 'CANCELLED' }),
      ]);
      expect(await poll('b-5')).toEqual([]);
      expect(await audit(batch.batch_id)).toEqual([
        'BATCH_CREATED',
        'COMMAND_CREATED',
        'COMMAND_CANCELLED',
        'BATCH_CANCELLED',
      ]);
      const again = await post(`/api/v1/command-batches/${batch.batch_id}/cancel`, {});
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ code: 'BATCH_FINISHED', status: 'CANCELLED' });
    });

    it('lists batches newest first with a cursor, filtered by status', async () => {
      const page = await json<{ batches: Batch[]; next_cursor: string | null }>(
        await gw.asUser(viewer, '/api/v1/command-batches?limit=2'),
      );
      expect(page.batches).toHaveLength(2);
      expect(page.batches[0]!.status).toBe('CANCELLED');
      expect(page.next_cursor).not.toBeNull();
      const rest = await json<{ batches: Batch[] }>(
        await gw.asUser(viewer, `/api/v1/command-batches?limit=50&cursor=${page.next_cursor}`),
      );
      expect(rest.batches).toHaveLength(3);
      const ids = [...page.batches, ...rest.batches].map((b) => b.batch_id);
      expect(new Set(ids).size).toBe(5);
      const completed = await json<{ batches: Batch[] }>(
        await gw.asUser(viewer, '/api/v1/command-batches?status=COMPLETED'),
      );
      expect(completed.batches.map((b) => b.status)).toEqual(['COMPLETED']);
      expect((await gw.asUser(viewer, '/api/v1/command-batches?cursor=zzz')).status).toBe(400);
    });
  });
}
