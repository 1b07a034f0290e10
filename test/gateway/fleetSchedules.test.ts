/**
 * Command schedules over real HTTP, on a hand-moved clock: validation (cron, time zone,
 * targets), a cron schedule fired by two gateways ticking at once — once per tick, every
 * run recorded — cron in a time zone, a maintenance window that defers a run to its
 * opening, pause / resume / delete, a template target, and a run that fails and says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../gateway/index.js';
import type { FleetDriver } from '../../gateway/fleet/driver.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { fleetRoutes } from '../../gateway/fleet/module.js';
import { testClock } from '../support/device.js';
import { json, QUIET_LINK, startFleetGateway, type FleetGateway } from '../support/fleet.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Schedule extends Json {
  schedule_id: string;
  status: string;
  next_run_at: string | null;
}
interface Execution extends Json {
  status: string;
  scheduled_for: string;
  result: Json;
  error: string | null;
}

/**
 * What the schedules send: a low-risk command. A schedule's run of a high-risk one is held for
 * approval by default, each run (fleetApprovals.test.ts follows such a run through approval).
 */
const NIGHTLY_SYNC = { command_type: 'SYNC_TRANSACTIONS', payload: { max_records: 100 } };

for (const dialect of CLOUD_DIALECTS) {
  describe(`command schedules on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: FleetGateway;
    let second: { gateway: Gateway; fleet: FleetDriver };
    let operator: string;
    let viewer: string;

    const post = (path: string, body: unknown, token = operator) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const createSchedule = async (body: Json): Promise<Schedule> => {
      const res = await post('/api/v1/command-schedules', body);
      expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
      return json<Schedule>(res);
    };
    const get = async (id: string) =>
      json<Schedule>(await gw.asUser(viewer, `/api/v1/command-schedules/${id}`));
    const runs = async (id: string) =>
      (
        await json<{ executions: Execution[] }>(
          await gw.asUser(viewer, `/api/v1/command-schedules/${id}/executions`),
        )
      ).executions.reverse();
    /** Both gateways run their scheduler at the same moment. */
    const tickBoth = () => Promise.all([gw.fleet.tick(), second.fleet.tick()]);
    const moveTo = (iso: string, plusMs = 0) =>
      clock.advance(Date.parse(iso) + plusMs - clock.now().getTime());

    beforeAll(async () => {
      gw = await startFleetGateway(dialect, clock);
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
      second = { gateway, fleet: fleet! };
      operator = await gw.token('operator');
      viewer = await gw.token('viewer');
      for (const id of ['s-1', 's-2']) await gw.insertDevice(id);
    });
    afterAll(async () => {
      await second.gateway.close();
      await gw.close();
    });

    it('validates schedules when they are created', async () => {
      const target = { kind: 'COMMAND', device_ids: ['s-1'], command: NIGHTLY_SYNC };
      expect(
        (
          await post(
            '/api/v1/command-schedules',
            { name: 'x', schedule_type: 'CRON', cron_expression: '* * * * *', target },
            viewer,
          )
        ).status,
      ).toBe(403);
      const bad = await post('/api/v1/command-schedules', {
        name: 'x',
        schedule_type: 'CRON',
        cron_expression: '61 * * * *',
        timezone: 'Mars/Olympus',
        run_at: '2030-01-01T00:00:00Z',
        maintenance_window: { start: '25:00', end: '04:00' },
        target,
      });
      expect(bad.status).toBe(422);
      expect(
        (await json<{ errors: { path: string }[] }>(bad)).errors.map((e) => e.path).sort(),
      ).toEqual(['$.maintenance_window.start', '$.run_at', '$.timezone']);
      const cron = await post('/api/v1/command-schedules', {
        name: 'x',
        schedule_type: 'CRON',
        cron_expression: '61 * * * *',
        target,
      });
      expect((await json<{ errors: { path: string }[] }>(cron)).errors[0]!.path).toBe(
        '$.cron_expression',
      );
      const once = await post('/api/v1/command-schedules', {
        name: 'x',
        schedule_type: 'ONCE',
        target,
      });
      expect((await json<{ errors: { path: string }[] }>(once)).errors[0]!.path).toBe('$.run_at');
      const unknown = await post('/api/v1/command-schedules', {
        name: 'x',
        schedule_type: 'CRON',
        cron_expression: '* * * * *',
        target: { ...target, device_ids: ['ghost'] },
      });
      expect(await json(unknown)).toMatchObject({ code: 'UNKNOWN_DEVICES' });
      const template = await post('/api/v1/command-schedules', {
        name: 'x',
        schedule_type: 'CRON',
        cron_expression: '* * * * *',
        target: {
          kind: 'TEMPLATE',
          template_id: '00000000-0000-4000-8000-000000000000',
          target: { kind: 'device', device_id: 's-1' },
        },
      });
      expect(await json(template)).toMatchObject({ code: 'TEMPLATE_NOT_FOUND' });
    });

    it('fires a cron schedule once per tick with two gateways ticking at once', async () => {
      const schedule = await createSchedule({
        name: 'every five minutes',
        schedule_type: 'CRON',
        cron_expression: '*/5 * * * *',
        target: { kind: 'COMMAND', device_ids: ['s-1', 's-2'], command: NIGHTLY_SYNC },
      });
      const first = schedule.next_run_at!;
      expect(Date.parse(first) % 300_000).toBe(0);
      expect(Date.parse(first)).toBeGreaterThan(clock.now().getTime());
      await tickBoth();
      expect(await runs(schedule.schedule_id)).toEqual([]);

      moveTo(first, 1_000);
      await tickBoth();
      await tickBoth();
      const fired = await runs(schedule.schedule_id);
      expect(fired).toEqual([
        expect.objectContaining({
          status: 'SUCCEEDED',
          scheduled_for: first,
          result: { batch_id: expect.any(String) as unknown, missed_ticks: 0 },
        }),
      ]);
      const batchId = fired[0]!.result.batch_id as string;
      const commands = await gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['device_id', 'command_type', 'status', 'created_by'])
        .where('batch_id', '=', batchId)
        .orderBy('device_id')
        .execute();
      expect(commands).toEqual([
        {
          device_id: 's-1',
          command_type: 'SYNC_TRANSACTIONS',
          status: 'PENDING',
          created_by: 'schedule:every five minutes',
        },
        {
          device_id: 's-2',
          command_type: 'SYNC_TRANSACTIONS',
          status: 'PENDING',
          created_by: 'schedule:every five minutes',
        },
      ]);
      const next = new Date(Date.parse(first) + 300_000).toISOString();
      expect(await get(schedule.schedule_id)).toMatchObject({
        status: 'ACTIVE',
        next_run_at: next,
        last_run_at: clock.now().toISOString(),
      });

      moveTo(next, 1_000);
      await tickBoth();
      await tickBoth();
      expect((await runs(schedule.schedule_id)).map((r) => r.scheduled_for)).toEqual([first, next]);

      // three ticks came due while nothing ran: one run, the two others counted as missed
      moveTo(next, 3 * 300_000 + 1_000);
      await tickBoth();
      const latest = (await runs(schedule.schedule_id)).at(-1)!;
      expect(latest).toMatchObject({
        status: 'SUCCEEDED',
        scheduled_for: new Date(Date.parse(next) + 300_000).toISOString(),
        result: { missed_ticks: 2 },
      });
      expect(await runs(schedule.schedule_id)).toHaveLength(3);

      // paused: nothing fires; resumed: from the next tick on; deleted: gone from the list
      const paused = await json<Schedule>(
        await post(`/api/v1/command-schedules/${schedule.schedule_id}/pause`, {}),
      );
      expect(paused).toMatchObject({ status: 'PAUSED', next_run_at: null });
      expect(
        (await post(`/api/v1/command-schedules/${schedule.schedule_id}/pause`, {})).status,
      ).toBe(409);
      clock.advance(3_600_000);
      await tickBoth();
      expect(await runs(schedule.schedule_id)).toHaveLength(3);
      const resumed = await json<Schedule>(
        await post(`/api/v1/command-schedules/${schedule.schedule_id}/resume`, {}),
      );
      expect(resumed.status).toBe('ACTIVE');
      expect(Date.parse(resumed.next_run_at!)).toBeGreaterThan(clock.now().getTime());
      const deleted = await gw.asUser(
        operator,
        `/api/v1/command-schedules/${schedule.schedule_id}`,
        {
          method: 'DELETE',
        },
      );
      expect(deleted.status).toBe(204);
      clock.advance(3_600_000);
      await tickBoth();
      expect(await runs(schedule.schedule_id)).toHaveLength(3);
      expect((await get(schedule.schedule_id)).status).toBe('DELETED');
      const listed = await json<{ schedules: Schedule[] }>(
        await gw.asUser(viewer, '/api/v1/command-schedules'),
      );
      expect(listed.schedules.map((s) => s.schedule_id)).not.toContain(schedule.schedule_id);
      expect(
        (await post(`/api/v1/command-schedules/${schedule.schedule_id}/resume`, {})).status,
      ).toBe(404);
    });

    it('computes cron ticks in the schedule time zone', async () => {
      const schedule = await createSchedule({
        name: 'new york night',
        schedule_type: 'CRON',
        cron_expression: '30 3 * * *',
        timezone: 'America/New_York',
        target: { kind: 'COMMAND', device_ids: ['s-1'], command: NIGHTLY_SYNC },
      });
      const local = new Intl.DateTimeFormat('en-US', {
        timeZone: 'America/New_York',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(new Date(schedule.next_run_at!));
      expect(local).toBe('03:30');
      await gw.asUser(operator, `/api/v1/command-schedules/${schedule.schedule_id}`, {
        method: 'DELETE',
      });
    });

    it('defers a run outside its maintenance window to the window opening', async () => {
      const hhmm = (d: Date) => d.toISOString().slice(11, 16);
      const opens = new Date(clock.now().getTime() + 2 * 3_600_000);
      const closes = new Date(clock.now().getTime() + 3 * 3_600_000);
      const runAt = new Date(clock.now().getTime() + 60_000).toISOString();
      const schedule = await createSchedule({
        name: 'in the window',
        schedule_type: 'ONCE',
        run_at: runAt,
        maintenance_window: { start: hhmm(opens), end: hhmm(closes) },
        target: { kind: 'COMMAND', device_ids: ['s-2'], command: NIGHTLY_SYNC },
      });
      expect(schedule.next_run_at).toBe(runAt);
      moveTo(runAt, 1_000);
      await tickBoth();
      const opening = `${opens.toISOString().slice(0, 16)}:00.000Z`;
      expect(await runs(schedule.schedule_id)).toEqual([
        expect.objectContaining({
          status: 'SKIPPED',
          scheduled_for: runAt,
          result: { reason: 'outside maintenance window', deferred_to: opening },
        }),
      ]);
      expect(await get(schedule.schedule_id)).toMatchObject({
        status: 'ACTIVE',
        next_run_at: opening,
      });
      moveTo(opening, 1_000);
      await tickBoth();
      expect((await runs(schedule.schedule_id)).map((r) => r.status)).toEqual([
        'SKIPPED',
        'SUCCEEDED',
      ]);
      expect(await get(schedule.schedule_id)).toMatchObject({
        status: 'COMPLETED',
        next_run_at: null,
      });
    });

    it('applies a template on schedule, and records a run that cannot be performed', async () => {
      const template = await json<{ template_id: string }>(
        await post('/api/v1/command-templates', {
          name: 'diag',
          variables: { logs: { type: 'boolean', required: true } },
          commands: [{ command_type: 'DIAGNOSTIC', payload: { upload_logs: '{{ logs }}' } }],
        }),
      );
      const bad = await post('/api/v1/command-schedules', {
        name: 'wrong variables',
        schedule_type: 'ONCE',
        run_at: clock.now().toISOString(),
        target: {
          kind: 'TEMPLATE',
          template_id: template.template_id,
          variables: { logs: 'yes' },
          target: { kind: 'device', device_id: 's-1' },
        },
      });
      expect(await json(bad)).toMatchObject({
        code: 'TEMPLATE_VARIABLES_INVALID',
        errors: [{ path: '$.variables.logs' }],
      });
      const body = {
        schedule_type: 'ONCE',
        run_at: clock.now().toISOString(),
        target: {
          kind: 'TEMPLATE',
          template_id: template.template_id,
          variables: { logs: true },
          target: { kind: 'batch', device_ids: ['s-1', 's-2'] },
        },
      };
      const good = await createSchedule({ ...body, name: 'diagnose' });
      const doomed = await createSchedule({ ...body, name: 'doomed' });
      await gw.handle.store.cloud
        .updateTable('command_schedules')
        .set({
          target: JSON.stringify({
            ...body.target,
            template_id: '00000000-0000-4000-8000-000000000000',
          }),
        })
        .where('schedule_id', '=', doomed.schedule_id)
        .execute();
      clock.advance(1_000);
      await tickBoth();
      const [run] = await runs(good.schedule_id);
      expect(run).toMatchObject({ status: 'SUCCEEDED' });
      const batch = await json<Json>(
        await gw.asUser(viewer, `/api/v1/command-batches/${String(run!.result.batch_id)}`),
      );
      expect(batch).toMatchObject({
        status: 'IN_PROGRESS',
        commands: [{ command_type: 'DIAGNOSTIC', payload: { upload_logs: true } }],
        progress: { total: 2, PENDING: 2 },
      });
      expect(await runs(doomed.schedule_id)).toEqual([
        expect.objectContaining({
          status: 'FAILED',
          error: expect.stringContaining('TEMPLATE_NOT_FOUND') as unknown,
        }),
      ]);
      expect((await get(doomed.schedule_id)).status).toBe('COMPLETED');
    });
  });
}
