/**
 * Command broadcasts over real HTTP and device sockets, on a hand-moved clock: a phased
 * rollout to the devices a filter selects (in md5(broadcast:device) order), the wait
 * between phases, an automatic halt in phase 2 when devices ack FAILED beyond the
 * threshold, resume after a halt, pause and cancel, per-device outcomes, and a gateway that
 * takes over a broadcast another one started — with two gateways ticking at once, each
 * phase is launched once.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../gateway/index.js';
import type { FleetDriver } from '../../gateway/fleet/driver.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { fleetRoutes } from '../../gateway/fleet/module.js';
import { SYSTEM_ACTOR } from '../../gateway/commands/store/commands/command.js';
import { expireCommands } from '../../gateway/commands/store/commands/expireCommands.js';
import { verifyCommandSignature } from '../../runtime/index.js';
import { testClock, type DeviceSocket } from '../support/device.js';
import {
  json,
  onlineDevice,
  QUIET_LINK,
  startFleetGateway,
  type FleetGateway,
} from '../support/fleet.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Broadcast extends Json {
  broadcast_id: string;
  status: string;
  halt_reason: string | null;
  current_phase: number;
  phases: { phase: number; size: number | null; stats: Record<string, number> | null }[];
}
interface Outcome {
  device_id: string;
  command_id: string;
  phase: number;
  status: string;
}

const POS = Array.from({ length: 10 }, (_, i) => `pos-${String(i).padStart(2, '0')}`);
const ATM = ['atm-1', 'atm-2', 'atm-3', 'atm-4'];

for (const dialect of CLOUD_DIALECTS) {
  describe(`command broadcasts on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: FleetGateway;
    /** Sends the requests: an admin, as high-risk commands by an operator wait for approval. */
    let sender: string;
    let viewer: string;
    const secrets: Record<string, string> = {};
    const sockets = new Map<string, DeviceSocket>();

    const post = (path: string, body: unknown, token = sender) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const create = async (body: Json): Promise<Broadcast> => {
      const res = await post('/api/v1/command-broadcasts', body);
      expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
      return json<Broadcast>(res);
    };
    const get = async (id: string, via = gw.url): Promise<Broadcast> =>
      json<Broadcast>(
        await fetch(`${via}/api/v1/command-broadcasts/${id}`, {
          headers: { authorization: `Bearer ${viewer}` },
        }),
      );
    const outcomes = async (id: string, query = ''): Promise<Outcome[]> =>
      (
        await json<{ devices: Outcome[] }>(
          await gw.asUser(viewer, `/api/v1/command-broadcasts/${id}/devices?limit=1000${query}`),
        )
      ).devices;
    const audit = async (id: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select('event_type')
          .where('broadcast_id', '=', id)
          .where('event_type', '!=', 'COMMAND_CREATED')
          .orderBy('id')
          .execute()
      ).map((r) => r.event_type);
    /** Each device of `phase` takes its pushed command and acks it as `decide` says. */
    const ackPhase = async (
      id: string,
      phase: number,
      decide: (deviceId: string, index: number) => 'EXECUTED' | 'FAILED',
    ) => {
      const devices = (await outcomes(id, `&phase=${phase}`)).sort((a, b) =>
        a.device_id.localeCompare(b.device_id),
      );
      let index = 0;
      for (const outcome of devices) {
        const socket = sockets.get(outcome.device_id)!;
        const frame = (await socket.next('command')) as unknown as {
          command: { command_id: string };
        };
        expect(frame.command.command_id).toBe(outcome.command_id);
        const status = decide(outcome.device_id, index++);
        socket.send({
          type: 'ack',
          command_id: outcome.command_id,
          status,
          ...(status === 'FAILED' ? { error: 'flash failed' } : {}),
        });
        await socket.next('acked');
        await gw.fleet.settle();
      }
      return devices.map((d) => d.device_id);
    };

    beforeAll(async () => {
      gw = await startFleetGateway(dialect, clock);
      sender = gw.adminToken;
      viewer = await gw.token('viewer');
      for (const id of [...POS, ...ATM]) secrets[id] = await gw.insertDevice(id);
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({
          device_type: 'POS',
          location: 'store-1',
          metadata: JSON.stringify({ tier: 1, beta: true }),
        })
        .where('device_id', 'in', POS)
        .execute();
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({ device_type: 'ATM', metadata: JSON.stringify({ tier: '1' }) })
        .where('device_id', 'in', ATM)
        .execute();
      for (const id of POS) sockets.set(id, await onlineDevice(gw.url, id, secrets[id]!, clock));
    });
    afterAll(async () => {
      for (const socket of sockets.values()) await socket.close();
      await gw.close(); // idempotent for the gateway, and closes the store
    });

    it('validates bodies and roles', async () => {
      const command = { command_type: 'REBOOT', payload: {} };
      expect(
        (
          await post(
            '/api/v1/command-broadcasts',
            { command, target: { device_type: 'POS' } },
            viewer,
          )
        ).status,
      ).toBe(403);
      const bad = await post('/api/v1/command-broadcasts', {
        command,
        target: {},
        rollout: { phases: [50, 20] },
        failure_threshold: 2,
      });
      expect(bad.status).toBe(422);
      const paths = (await json<{ errors: { path: string }[] }>(bad)).errors.map((e) => e.path);
      expect(paths).toEqual(
        expect.arrayContaining(['$.target', '$.rollout.phases', '$.failure_threshold']),
      );
      const sqlish = await post('/api/v1/command-broadcasts', {
        command,
        target: { device_type: "POS' OR '1'='1" },
      });
      expect(sqlish.status).toBe(201);
      const none = await json<Broadcast>(sqlish);
      expect(none).toMatchObject({ status: 'COMPLETED', total_devices: 0 });
      expect(await outcomes(none.broadcast_id)).toEqual([]);
    });

    it('rolls out in phases and halts in phase 2 when failures exceed the threshold; resume finishes it', async () => {
      const created = await create({
        command: { command_type: 'REBOOT', payload: { reason: 'firmware 2.1' } },
        target: { device_type: 'POS', location: ['store-1'], metadata: { tier: 1 } },
        rollout: { phases: [10, 50, 100], wait_seconds: 30 },
        failure_threshold: 0.25,
      });
      const id = created.broadcast_id;
      expect(created).toMatchObject({
        status: 'IN_PROGRESS',
        current_phase: 1,
        total_devices: 10,
        phases: [
          { phase: 1, size: 1 },
          { phase: 2, size: null },
          { phase: 3, size: null },
        ],
      });
      // phase 1 is the first device in md5(broadcast:device) order
      const order = [...POS].sort((a, b) => {
        const h = (d: string) => createHash('md5').update(`${id}:${d}`).digest('hex');
        return h(a).localeCompare(h(b));
      });
      expect((await outcomes(id)).map((o) => o.device_id)).toEqual([order[0]]);

      await ackPhase(id, 1, () => 'EXECUTED');
      const waiting = await get(id);
      expect(waiting).toMatchObject({ status: 'WAITING_NEXT_PHASE', succeeded_count: 1 });
      expect(waiting.next_phase_at).toBe(new Date(clock.now().getTime() + 30_000).toISOString());
      await gw.fleet.tick();
      expect((await get(id)).status).toBe('WAITING_NEXT_PHASE');

      clock.advance(30_000);
      await gw.fleet.tick();
      expect(await get(id)).toMatchObject({ status: 'IN_PROGRESS', current_phase: 2 });
      const phase2 = (await outcomes(id, '&phase=2')).map((o) => o.device_id).sort();
      expect(phase2).toEqual(order.slice(1, 5).sort());

      // 1 of 4 failing is 25%: not above the threshold; the second failure is
      await ackPhase(id, 2, (_, i) => (i < 2 ? 'FAILED' : 'EXECUTED'));
      const halted = await get(id);
      expect(halted).toMatchObject({
        status: 'HALTED',
        halt_reason: 'FAILURE_THRESHOLD',
        current_phase: 2,
        failed_count: 2,
        succeeded_count: 3,
      });
      expect(halted.phases[1]!.stats).toMatchObject({ executed: 2, failed: 2 });
      clock.advance(3_600_000);
      await gw.fleet.tick();
      expect((await get(id)).status).toBe('HALTED');
      expect(await outcomes(id)).toHaveLength(5);
      expect(await outcomes(id, '&status=FAILED')).toHaveLength(2);
      expect(await audit(id)).toEqual([
        'BROADCAST_CREATED',
        'BROADCAST_PHASE_STARTED',
        'BROADCAST_PHASE_STARTED',
        'BROADCAST_HALTED',
      ]);

      // the operator overrides the halt: phase 3 follows after the wait
      const resumed = await post(`/api/v1/command-broadcasts/${id}/resume`, {});
      expect(resumed.status).toBe(200);
      expect(await json(resumed)).toMatchObject({
        status: 'WAITING_NEXT_PHASE',
        halt_reason: null,
      });
      clock.advance(30_000);
      await gw.fleet.tick();
      expect(await get(id)).toMatchObject({ status: 'IN_PROGRESS', current_phase: 3 });
      await ackPhase(id, 3, () => 'EXECUTED');
      expect(await get(id)).toMatchObject({
        status: 'COMPLETED',
        succeeded_count: 8,
        failed_count: 2,
        total_devices: 10,
      });
      expect(await audit(id)).toEqual([
        'BROADCAST_CREATED',
        'BROADCAST_PHASE_STARTED',
        'BROADCAST_PHASE_STARTED',
        'BROADCAST_HALTED',
        'BROADCAST_RESUMED',
        'BROADCAST_PHASE_STARTED',
        'BROADCAST_COMPLETED',
      ]);
      const again = await post(`/api/v1/command-broadcasts/${id}/cancel`, {});
      expect(again.status).toBe(409);
      expect(await json(again)).toMatchObject({ code: 'BROADCAST_FINISHED' });
    });

    it('pause keeps created commands but starts no phase; cancel stops the undelivered', async () => {
      const { broadcast_id: id } = await create({
        command: { command_type: 'DIAGNOSTIC', payload: {} },
        target: { device_type: 'ATM', metadata: { tier: '1' } },
        rollout: { phases: [50, 100], wait_seconds: 0 },
      });
      // ATMs are offline: phase 1's two commands wait, PENDING
      expect(await outcomes(id)).toEqual([
        expect.objectContaining({ status: 'PENDING', phase: 1 }),
        expect.objectContaining({ status: 'PENDING', phase: 1 }),
      ]);
      const paused = await post(`/api/v1/command-broadcasts/${id}/pause`, {});
      expect(await json(paused)).toMatchObject({ status: 'HALTED', halt_reason: 'PAUSED' });
      expect((await post(`/api/v1/command-broadcasts/${id}/pause`, {})).status).toBe(409);
      clock.advance(7_200_000);
      expect(await expireCommands(gw.handle.store, SYSTEM_ACTOR, clock.now())).toHaveLength(2);
      await gw.fleet.tick();
      expect(await get(id)).toMatchObject({ status: 'HALTED', current_phase: 1, failed_count: 2 });
      expect(await outcomes(id)).toHaveLength(2);

      const resumed = await json<Broadcast>(
        await post(`/api/v1/command-broadcasts/${id}/resume`, {}),
      );
      expect(resumed).toMatchObject({ status: 'IN_PROGRESS', current_phase: 2 });
      expect(await outcomes(id, '&phase=2&status=PENDING')).toHaveLength(2);
      const cancelled = await post(`/api/v1/command-broadcasts/${id}/cancel`, {});
      expect(await json(cancelled)).toMatchObject({ status: 'CANCELLED' });
      expect(await outcomes(id, '&status=CANCELLED')).toHaveLength(2);
      expect((await post(`/api/v1/command-broadcasts/${id}/resume`, {})).status).toBe(409);
      expect(await audit(id)).toEqual([
        'BROADCAST_CREATED',
        'BROADCAST_PHASE_STARTED',
        'BROADCAST_PAUSED',
        'BROADCAST_RESUMED',
        'BROADCAST_PHASE_STARTED',
        'COMMAND_CANCELLED',
        'COMMAND_CANCELLED',
        'BROADCAST_CANCELLED',
      ]);
    });

    it('creates the commands of idle sockets here DELIVERED and pushes them; one behind a PENDING command waits its turn', async () => {
      const kiosks = ['kiosk-1', 'kiosk-2'];
      const held = new Map<string, DeviceSocket>();
      for (const id of kiosks) {
        const secret = await gw.insertDevice(id);
        await gw.handle.store.cloud
          .updateTable('edge_devices')
          .set({ device_type: 'KIOSK' })
          .where('device_id', '=', id)
          .execute();
        held.set(id, await onlineDevice(gw.url, id, secret, clock));
      }
      // kiosk-2 has an older command that nobody pushed yet
      const earlier = '00000000-0000-4000-8000-00000000e001';
      await gw.handle.store.cloud
        .insertInto('device_commands')
        .values({
          command_id: earlier,
          device_id: 'kiosk-2',
          command_type: 'DIAGNOSTIC',
          payload: JSON.stringify({}),
          status: 'PENDING',
          created_at: new Date(clock.now().getTime() - 1000).toISOString(),
        })
        .execute();

      const { broadcast_id: id } = await create({
        command: { command_type: 'REBOOT', payload: { reason: 'kiosk update' } },
        target: { device_type: 'KIOSK' },
      });
      // kiosk-1's command was delivered within the launch's transaction (its delivery is
      // audited before the phase start), not by a delivery after it
      const byDevice = new Map((await outcomes(id)).map((o) => [o.device_id, o]));
      const rows = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['id', 'event_type', 'command_id'])
        .where((eb) =>
          eb.or([
            eb.and([eb('broadcast_id', '=', id), eb('event_type', '=', 'BROADCAST_PHASE_STARTED')]),
            eb('command_id', '=', byDevice.get('kiosk-1')!.command_id),
          ]),
        )
        .orderBy('id')
        .execute();
      expect(rows.map((r) => r.event_type)).toEqual([
        'COMMAND_CREATED',
        'COMMAND_DELIVERED',
        'BROADCAST_PHASE_STARTED',
      ]);
      const first = (await held.get('kiosk-1')!.next('command')) as unknown as {
        command: Record<string, unknown>;
      };
      expect(first.command.command_id).toBe(byDevice.get('kiosk-1')!.command_id);
      expect(verifyCommandSignature(first.command, 'kiosk-1', gw.keys.publicKeyPem)).toBe(true);

      // kiosk-2 gets its older command first, then the broadcast's
      const second = held.get('kiosk-2')!;
      const pushed: string[] = [];
      for (let i = 0; i < 2; i++) {
        const frame = (await second.next('command')) as unknown as {
          command: { command_id: string };
        };
        pushed.push(frame.command.command_id);
      }
      expect(pushed).toEqual([earlier, byDevice.get('kiosk-2')!.command_id]);

      for (const [deviceId, command_id] of [
        ['kiosk-1', byDevice.get('kiosk-1')!.command_id],
        ['kiosk-2', earlier],
        ['kiosk-2', byDevice.get('kiosk-2')!.command_id],
      ] as const) {
        held.get(deviceId)!.send({ type: 'ack', command_id, status: 'EXECUTED' });
        await held.get(deviceId)!.next('acked');
      }
      await gw.fleet.settle();
      await gw.fleet.tick();
      expect(await get(id)).toMatchObject({ status: 'COMPLETED', succeeded_count: 2 });
      // each command delivered once, by this gateway, and executed once
      const trail = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['command_id', 'event_type', 'actor'])
        .where(
          'command_id',
          'in',
          [...byDevice.values()].map((o) => o.command_id),
        )
        .orderBy('id')
        .execute();
      for (const deviceId of kiosks)
        expect(
          trail
            .filter((t) => t.command_id === byDevice.get(deviceId)!.command_id)
            .map((t) => t.event_type),
        ).toEqual(['COMMAND_CREATED', 'COMMAND_DELIVERED', 'COMMAND_EXECUTED']);
      expect(trail.filter((t) => t.event_type === 'COMMAND_DELIVERED').map((t) => t.actor)).toEqual(
        [expect.stringMatching(/^gateway:/), expect.stringMatching(/^gateway:/)],
      );
      for (const socket of held.values()) await socket.close();
    });

    it('another gateway continues a broadcast; two gateways ticking launch a phase once', async () => {
      const { broadcast_id: id } = await create({
        command: { command_type: 'UPDATE_CONFIG', payload: {}, expires_in_seconds: 10 },
        target: { device_ids: ATM },
        rollout: { phases: [50, 100], wait_seconds: 60 },
      });
      clock.advance(11_000);
      await expireCommands(gw.handle.store, SYSTEM_ACTOR, clock.now());
      await gw.fleet.tick();
      expect(await get(id)).toMatchObject({ status: 'WAITING_NEXT_PHASE', failed_count: 2 });

      const others: { gateway: Gateway; fleet: FleetDriver; url: string }[] = [];
      for (let i = 0; i < 2; i++) {
        let fleet: FleetDriver | undefined;
        const gateway = await createGateway({
          store: gw.handle.store,
          keys: gw.keys,
          now: clock.now,
          routes: [
            commandRoutes(QUIET_LINK),
            fleetRoutes({ tickIntervalMs: 3_600_000, onDriver: (d) => (fleet = d) }),
          ],
        });
        others.push({ gateway, fleet: fleet!, url: await gateway.listen(0) });
      }
      await gw.gateway.close(); // the first gateway is gone; its store stays
      clock.advance(60_000);
      await Promise.all(others.map((o) => o.fleet.tick()));
      expect(await get(id, others[1]!.url)).toMatchObject({
        status: 'IN_PROGRESS',
        current_phase: 2,
      });
      const commands = await gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['device_id', 'batch_sequence'])
        .where('broadcast_id', '=', id)
        .execute();
      expect(commands.map((c) => c.device_id).sort()).toEqual([...ATM].sort());
      expect(commands.filter((c) => c.batch_sequence === 2)).toHaveLength(2);
      for (const o of others) await o.gateway.close();
    });
  });
}
