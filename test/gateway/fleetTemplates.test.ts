/**
 * Command templates over real HTTP: saving (references must name declared variables,
 * defaults must have their type), versions, and applying — typed substitution (a whole
 * `{{ var }}` keeps its JSON type, inside text it is stringified), 422s with paths for
 * unknown, missing and mistyped variables and for rendered payloads their command type
 * refuses, and each target: one device, a batch, a broadcast.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../support/device.js';
import { json, startFleetGateway, type FleetGateway } from '../support/fleet.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Template extends Json {
  template_id: string;
  version: number;
}
interface Problem extends Json {
  code: string;
  errors: { path: string; message: string }[];
}

const ROLLOUT = {
  name: 'maintenance',
  description: 'reboot, then diagnose',
  variables: {
    delay: { type: 'number', default: 5 },
    reason: { type: 'string', required: true },
    checks: { type: 'array' },
    logs: { type: 'boolean', default: false },
  },
  commands: [
    {
      command_type: 'REBOOT',
      payload: { delay_seconds: '{{ delay }}', reason: 'update to {{ reason }} in {{ delay }}s' },
    },
    { command_type: 'DIAGNOSTIC', payload: { checks: '{{ checks }}', upload_logs: '{{ logs }}' } },
  ],
};

for (const dialect of CLOUD_DIALECTS) {
  describe(`command templates on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: FleetGateway;
    /** Sends the requests: an admin, as high-risk commands by an operator wait for approval. */
    let sender: string;
    let viewer: string;
    let template: Template;

    const post = (path: string, body: unknown, token = sender) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const apply = (body: Json, id = template.template_id) =>
      post(`/api/v1/command-templates/${id}/apply`, body);
    const problem = async (res: Response, status = 422) => {
      expect(res.status).toBe(status);
      return json<Problem>(res);
    };
    const commandsOf = (batchId: string) =>
      gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['device_id', 'command_type', 'payload', 'status'])
        .where('batch_id', '=', batchId)
        .orderBy('device_id')
        .orderBy('batch_sequence')
        .execute();

    beforeAll(async () => {
      gw = await startFleetGateway(dialect, clock);
      sender = gw.adminToken;
      viewer = await gw.token('viewer');
      for (const id of ['t-1', 't-2', 't-3']) await gw.insertDevice(id);
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({ device_type: 'KIOSK' })
        .where('device_id', 'in', ['t-2', 't-3'])
        .execute();
    });
    afterAll(async () => {
      await gw.close();
    });

    it('saves templates for operators, checking references, defaults and command types', async () => {
      expect((await post('/api/v1/command-templates', ROLLOUT, viewer)).status).toBe(403);
      const bad = await problem(
        await post('/api/v1/command-templates', {
          name: 'broken',
          variables: { n: { type: 'number', default: 'five' } },
          commands: [
            { command_type: 'REBOOT', payload: { delay_seconds: '{{ missing }}' } },
            { command_type: 'TELEPORT', payload: {} },
            { command_type: 'DIAGNOSTIC', payload: { checks: ['{{ secrets.API_KEY }}'] } },
          ],
        }),
      );
      expect(bad.code).toBe('TEMPLATE_INVALID');
      expect(bad.errors.map((e) => e.path)).toEqual([
        '$.variables.n.default',
        '$.commands[0].payload.delay_seconds',
        '$.commands[1].command_type',
        '$.commands[2].payload.checks[0]',
      ]);
      const reserved = await problem(
        await post('/api/v1/command-templates', {
          name: 'reserved',
          variables: { secrets: { type: 'string' } },
          commands: [{ command_type: 'REBOOT' }],
        }),
      );
      expect(reserved.code).toBe('VALIDATION_FAILED');

      const res = await post('/api/v1/command-templates', ROLLOUT);
      expect(res.status).toBe(201);
      template = await json<Template>(res);
      expect(template).toMatchObject({
        name: 'maintenance',
        version: 1,
        created_by: 'test admin',
      });
      const fetched = await json(
        await gw.asUser(viewer, `/api/v1/command-templates/${template.template_id}`),
      );
      expect(fetched).toEqual(template);
    });

    it('keeps versions: saving a name again adds the next one', async () => {
      const v2 = await json<Template>(
        await post('/api/v1/command-templates', { ...ROLLOUT, description: 'v2' }),
      );
      expect(v2.version).toBe(2);
      const latest = await json<{ templates: Template[] }>(
        await gw.asUser(viewer, '/api/v1/command-templates'),
      );
      expect(latest.templates.map((t) => [t.name, t.version])).toEqual([['maintenance', 2]]);
      const all = await json<{ templates: Template[] }>(
        await gw.asUser(viewer, '/api/v1/command-templates?name=maintenance'),
      );
      expect(all.templates.map((t) => t.version)).toEqual([2, 1]);
    });

    it('applies to one device with typed substitution, as a SEQUENTIAL batch', async () => {
      const res = await apply({
        variables: { reason: 'v2', delay: 30, checks: ['disk', 'printer'], logs: true },
        target: { kind: 'device', device_id: 't-1' },
      });
      expect(res.status).toBe(201);
      const applied = await json<{ kind: string; batch: { batch_id: string } & Json }>(res);
      expect(applied).toMatchObject({
        kind: 'batch',
        batch: { execution_mode: 'SEQUENTIAL', total_commands: 2, status: 'IN_PROGRESS' },
      });
      expect(applied.batch.commands).toEqual([
        {
          command_type: 'REBOOT',
          payload: { delay_seconds: 30, reason: 'update to v2 in 30s' },
          max_retries: 3,
        },
        {
          command_type: 'DIAGNOSTIC',
          payload: { checks: ['disk', 'printer'], upload_logs: true },
          max_retries: 3,
        },
      ]);
      const sent = await commandsOf(applied.batch.batch_id);
      expect(sent).toEqual([
        expect.objectContaining({
          device_id: 't-1',
          command_type: 'REBOOT',
          payload: { delay_seconds: 30, reason: 'update to v2 in 30s' },
        }),
      ]);
      const trail = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type', 'details'])
        .where('event_type', '=', 'TEMPLATE_APPLIED')
        .execute();
      expect(trail).toEqual([
        {
          event_type: 'TEMPLATE_APPLIED',
          details: expect.objectContaining({ version: 1, target: 'device' }) as unknown,
        },
      ]);
    });

    it('refuses unknown, missing and mistyped variables with their paths (422)', async () => {
      const target = { kind: 'device', device_id: 't-1' };
      const mistyped = await problem(
        await apply({ variables: { reason: 42, delay: '30', checks: { a: 1 }, nope: 1 }, target }),
      );
      expect(mistyped.code).toBe('TEMPLATE_VARIABLES_INVALID');
      expect(mistyped.errors).toEqual([
        { path: '$.variables.nope', message: 'the template declares no such variable' },
        { path: '$.variables.checks', message: 'expected array, got object' },
        { path: '$.variables.delay', message: 'expected number, got string' },
        { path: '$.variables.reason', message: 'expected string, got number' },
      ]);
      const missing = await problem(await apply({ variables: { checks: [] }, target }));
      expect(missing.errors).toEqual([
        { path: '$.variables.reason', message: 'required (string)' },
      ]);
      // an optional variable without default that a payload uses must be given
      const unset = await problem(await apply({ variables: { reason: 'x' }, target }));
      expect(unset.code).toBe('TEMPLATE_RENDER_INVALID');
      expect(unset.errors.map((e) => e.path)).toEqual(['$.commands[1].payload.checks']);
      // the rendered payload is checked against its command type
      const range = await problem(
        await apply({ variables: { reason: 'x', delay: 99_999, checks: [] }, target }),
      );
      expect(range.code).toBe('TEMPLATE_RENDER_INVALID');
      expect(range.errors.map((e) => e.path)).toEqual(['$.commands[0].payload.delay_seconds']);
      const unknownDevice = await problem(
        await apply({
          variables: { reason: 'x', checks: [] },
          target: { kind: 'device', device_id: 'nope' },
        }),
      );
      expect(unknownDevice.code).toBe('UNKNOWN_DEVICES');
      expect(
        (await apply({ variables: {}, target }, '00000000-0000-4000-8000-000000000000')).status,
      ).toBe(404);
    });

    it('applies to a batch of devices and, for a one-command template, to a filter', async () => {
      const batch = await json<{ batch: { batch_id: string } }>(
        await apply({
          variables: { reason: 'r', checks: [] },
          target: { kind: 'batch', device_ids: ['t-2', 't-3'], execution_mode: 'PARALLEL' },
        }),
      );
      const sent = await commandsOf(batch.batch.batch_id);
      expect(sent.map((c) => [c.device_id, c.command_type])).toEqual([
        ['t-2', 'REBOOT'],
        ['t-2', 'DIAGNOSTIC'],
        ['t-3', 'REBOOT'],
        ['t-3', 'DIAGNOSTIC'],
      ]);
      expect(sent[0]!.payload).toEqual({ delay_seconds: 5, reason: 'update to r in 5s' });

      const two = await problem(
        await apply({
          variables: { reason: 'r', checks: [] },
          target: { kind: 'broadcast', target: { device_type: 'KIOSK' } },
        }),
      );
      expect(two.code).toBe('TEMPLATE_NOT_BROADCASTABLE');
      const single = await json<Template>(
        await post('/api/v1/command-templates', {
          name: 'sync',
          variables: { max: { type: 'number', required: true } },
          commands: [{ command_type: 'SYNC_TRANSACTIONS', payload: { max_records: '{{ max }}' } }],
        }),
      );
      const res = await apply(
        { variables: { max: 50 }, target: { kind: 'broadcast', target: { device_type: 'KIOSK' } } },
        single.template_id,
      );
      expect(res.status).toBe(201);
      const broadcast = await json<{ kind: string; broadcast: { broadcast_id: string } & Json }>(
        res,
      );
      expect(broadcast).toMatchObject({
        kind: 'broadcast',
        broadcast: {
          command_type: 'SYNC_TRANSACTIONS',
          payload: { max_records: 50 },
          total_devices: 2,
          status: 'IN_PROGRESS',
        },
      });
    });
  });
}
