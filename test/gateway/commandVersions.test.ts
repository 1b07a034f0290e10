/**
 * Command versions over real HTTP: admins register a JSON schema per command type and
 * version (unsupported schemas refused with paths), commands are checked against the
 * current or the named version on every path that creates them (one device, a batch, a
 * broadcast) with 422 listing the failing JSON paths, deprecated versions are refused, the
 * changelog between two versions says what changed, and every change is audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Problem {
  status: number;
  code: string;
  errors?: { path: string; message: string }[];
  replaced_by?: string | null;
}

const REBOOT_V1 = {
  type: 'object',
  properties: {
    delay_seconds: { type: 'integer', minimum: 0, maximum: 600 },
    reason: { type: 'string', minLength: 3, maxLength: 100 },
  },
  required: ['reason'],
  additionalProperties: false,
};
const REBOOT_V2 = {
  ...REBOOT_V1,
  properties: {
    ...REBOOT_V1.properties,
    reason: { type: 'string', enum: ['maintenance', 'update', 'fault'] },
  },
  required: ['reason', 'delay_seconds'],
};

for (const dialect of CLOUD_DIALECTS) {
  describe(`command versions on ${dialect.name}`, () => {
    let gw: TestGateway;
    let operator: string;
    let viewer: string;

    const post = (path: string, body: unknown, token = gw.adminToken) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const reboot = (payload: Json, extra: Json = {}) =>
      post(
        '/api/v1/devices/cv-dev-1/commands',
        { command_type: 'REBOOT', payload, ...extra },
        gw.adminToken, // an operator's REBOOT would wait for approval
      );
    const problem = async (res: Response, status: number): Promise<Problem> => {
      expect(res.status, await res.clone().text()).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      return (await res.json()) as Problem;
    };
    const paths = (p: Problem) => (p.errors ?? []).map((e) => e.path).sort();

    beforeAll(async () => {
      gw = await startTestGateway(dialect);
      operator = await gw.token('operator');
      viewer = await gw.token('viewer');
      await gw.insertDevice('cv-dev-1');
      await gw.insertDevice('cv-dev-2');
    });
    afterAll(async () => {
      await gw.close();
    });

    it('refuses unsupported schemas with their paths, and non-admins', async () => {
      const bad = await problem(
        await post('/api/v1/command-types/REBOOT/versions', {
          version: '1.0.0',
          payload_schema: {
            type: 'object',
            properties: {
              reason: { type: 'string', pattern: '^a' },
              delay_seconds: { type: 'integer', minimum: 10, maximum: 5 },
            },
            required: 'reason',
          },
        }),
        422,
      );
      expect(bad.code).toBe('SCHEMA_INVALID');
      expect(paths(bad)).toEqual([
        '$.payload_schema.properties.delay_seconds.minimum',
        '$.payload_schema.properties.reason.pattern',
        '$.payload_schema.required',
      ]);
      const forbidden = await post(
        '/api/v1/command-types/REBOOT/versions',
        { version: '1.0.0', payload_schema: REBOOT_V1 },
        operator,
      );
      expect(forbidden.status).toBe(403);
      // nothing was registered: commands still pass on the built-in payload schema alone
      expect((await reboot({})).status).toBe(201);
    });

    it('checks commands against the current version and names every failing path', async () => {
      const created = await post('/api/v1/command-types/REBOOT/versions', {
        version: '1.0.0',
        payload_schema: REBOOT_V1,
        description: 'reboot with a reason',
        risk_level: 'HIGH',
      });
      expect(created.status, await created.clone().text()).toBe(201);
      expect(await created.json()).toMatchObject({
        command_type: 'REBOOT',
        version: '1.0.0',
        risk_level: 'HIGH',
        deprecated: false,
      });

      const invalid = await problem(await reboot({ delay_seconds: 700, reason: 'x' }), 422);
      expect(invalid.code).toBe('COMMAND_PAYLOAD_INVALID');
      expect(paths(invalid)).toEqual(['$.payload.delay_seconds', '$.payload.reason']);
      const missing = await problem(await reboot({ delay_seconds: 5 }), 422);
      expect(missing.errors).toEqual([{ path: '$.payload.reason', message: 'is required' }]);

      const ok = await reboot({ delay_seconds: 30, reason: 'weekly' });
      expect(ok.status).toBe(201);
      const command = (await ok.json()) as { command_id: string };
      const row = await gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['command_version'])
        .where('command_id', '=', command.command_id)
        .executeTakeFirstOrThrow();
      expect(row.command_version).toBe('1.0.0');

      const list = (await (
        await gw.asUser(viewer, '/api/v1/command-types/REBOOT/versions')
      ).json()) as Json;
      expect(list.current_version).toBe('1.0.0');
      const types = (await (await gw.asUser(viewer, '/api/v1/command-types')).json()) as {
        command_types: Json[];
      };
      expect(types.command_types).toContainEqual({
        command_type: 'REBOOT',
        current_version: '1.0.0',
        versions: 1,
        default_risk_level: 'HIGH',
      });
    });

    it('keeps a linear history and uses a named version over the current one', async () => {
      const v2 = await post('/api/v1/command-types/REBOOT/versions', {
        version: '2.0.0',
        payload_schema: REBOOT_V2,
        notes: 'reasons are a closed set; the delay is explicit',
      });
      expect(v2.status, await v2.clone().text()).toBe(201);
      const again = await problem(
        await post('/api/v1/command-types/REBOOT/versions', {
          version: '2.0.0',
          payload_schema: REBOOT_V2,
        }),
        409,
      );
      expect(again.code).toBe('COMMAND_VERSION_EXISTS');
      const older = await problem(
        await post('/api/v1/command-types/REBOOT/versions', {
          version: '1.5.0',
          payload_schema: REBOOT_V1,
        }),
        409,
      );
      expect(older.code).toBe('COMMAND_VERSION_NOT_NEWER');

      // the current version (2.0.0) wants an enum reason and a delay
      const current = await problem(await reboot({ reason: 'weekly' }), 422);
      expect(paths(current)).toEqual(['$.payload.delay_seconds', '$.payload.reason']);
      // naming 1.0.0 checks against it
      const named = await reboot({ reason: 'weekly' }, { command_version: '1.0.0' });
      expect(named.status, await named.clone().text()).toBe(201);
      const unknown = await problem(
        await reboot({ reason: 'fault' }, { command_version: '9.9.9' }),
        422,
      );
      expect(unknown.code).toBe('UNKNOWN_COMMAND_VERSION');
      expect(paths(unknown)).toEqual(['$.command_version']);
    });

    it('refuses a deprecated version and a type whose versions are all deprecated', async () => {
      const bad = await problem(
        await post('/api/v1/command-types/REBOOT/versions/1.0.0/deprecate', {
          replaced_by: '3.0.0',
        }),
        422,
      );
      expect(bad.code).toBe('REPLACEMENT_VERSION_INVALID');
      const deprecated = await post('/api/v1/command-types/REBOOT/versions/1.0.0/deprecate', {
        replaced_by: '2.0.0',
        reason: 'free-text reasons are gone',
      });
      expect(deprecated.status, await deprecated.clone().text()).toBe(200);
      expect(await deprecated.json()).toMatchObject({ deprecated: true, replaced_by: '2.0.0' });
      const twice = await problem(
        await post('/api/v1/command-types/REBOOT/versions/1.0.0/deprecate', {}),
        409,
      );
      expect(twice.code).toBe('COMMAND_VERSION_ALREADY_DEPRECATED');

      const refused = await problem(
        await reboot({ reason: 'weekly' }, { command_version: '1.0.0' }),
        422,
      );
      expect(refused.code).toBe('COMMAND_VERSION_DEPRECATED');
      expect(refused.replaced_by).toBe('2.0.0');
      expect((await reboot({ reason: 'update', delay_seconds: 0 })).status).toBe(201);

      // DIAGNOSTIC: one version, then deprecated: the type takes no commands
      const diag = () =>
        post(
          '/api/v1/devices/cv-dev-1/commands',
          { command_type: 'DIAGNOSTIC', payload: {} },
          operator,
        );
      expect(
        (
          await post('/api/v1/command-types/DIAGNOSTIC/versions', {
            version: '1.0.0',
            payload_schema: { type: 'object' },
          })
        ).status,
      ).toBe(201);
      expect((await diag()).status).toBe(201);
      expect(
        (await post('/api/v1/command-types/DIAGNOSTIC/versions/1.0.0/deprecate', {})).status,
      ).toBe(200);
      expect((await problem(await diag(), 422)).code).toBe('COMMAND_VERSION_DEPRECATED');
    });

    it('checks fleet operations too, with the command path inside the request', async () => {
      const batches = async () =>
        Number(
          (
            await gw.handle.store.cloud
              .selectFrom('command_batches')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await batches();
      const batch = await problem(
        await post(
          '/api/v1/command-batches',
          {
            device_ids: ['cv-dev-1', 'cv-dev-2'],
            commands: [
              { command_type: 'UPDATE_CONFIG', payload: {} },
              { command_type: 'REBOOT', payload: { reason: 'weekly', delay_seconds: 1 } },
            ],
          },
          operator,
        ),
        422,
      );
      expect(batch.code).toBe('COMMAND_PAYLOAD_INVALID');
      expect(paths(batch)).toEqual(['$.commands[1].payload.reason']);
      expect(await batches()).toBe(before);

      const broadcast = await problem(
        await post(
          '/api/v1/command-broadcasts',
          {
            command: { command_type: 'REBOOT', payload: { reason: 'fault' } },
            target: { device_ids: ['cv-dev-1'] },
          },
          operator,
        ),
        422,
      );
      expect(paths(broadcast)).toEqual(['$.command.payload.delay_seconds']);

      const fine = await post(
        '/api/v1/command-batches',
        {
          device_ids: ['cv-dev-1'],
          commands: [{ command_type: 'REBOOT', payload: { reason: 'fault', delay_seconds: 0 } }],
        },
        gw.adminToken,
      );
      expect(fine.status, await fine.clone().text()).toBe(201);
      // the commands a batch or a broadcast creates record the version they were checked against
      const { batch_id } = (await fine.json()) as { batch_id: string };
      const fineBroadcast = await post(
        '/api/v1/command-broadcasts',
        {
          command: { command_type: 'REBOOT', payload: { reason: 'update', delay_seconds: 0 } },
          target: { device_ids: ['cv-dev-2'] },
        },
        gw.adminToken,
      );
      expect(fineBroadcast.status, await fineBroadcast.clone().text()).toBe(201);
      const { broadcast_id } = (await fineBroadcast.json()) as { broadcast_id: string };
      const versions = (column: 'batch_id' | 'broadcast_id', id: string) =>
        gw.handle.store.cloud
          .selectFrom('device_commands')
          .select(['command_version'])
          .where(column, '=', id)
          .execute();
      await expect
        .poll(() => versions('batch_id', batch_id))
        .toEqual([{ command_version: '2.0.0' }]);
      await expect
        .poll(() => versions('broadcast_id', broadcast_id))
        .toEqual([{ command_version: '2.0.0' }]);
    });

    it('reports the changelog between two versions, and audits every change', async () => {
      const log = (await (
        await gw.asUser(viewer, '/api/v1/command-types/REBOOT/changelog?from=1.0.0&to=2.0.0')
      ).json()) as { breaking: boolean; entries: Json[] };
      expect(log.breaking).toBe(true);
      expect(log.entries).toHaveLength(1);
      expect(log.entries[0]).toMatchObject({
        from_version: '1.0.0',
        to_version: '2.0.0',
        change_type: 'CREATED',
        changes: {
          added_properties: [],
          newly_required: ['delay_seconds'],
          changed_properties: ['reason'],
          breaking: true,
          notes: 'reasons are a closed set; the delay is explicit',
        },
      });
      const all = (await (
        await gw.asUser(viewer, '/api/v1/command-types/REBOOT/changelog')
      ).json()) as { entries: Json[] };
      expect(all.entries.map((e) => [e.change_type, e.from_version, e.to_version])).toEqual([
        ['CREATED', null, '1.0.0'],
        ['DEPRECATED', null, '1.0.0'],
        ['CREATED', '1.0.0', '2.0.0'],
      ]);
      const range = await gw.asUser(
        viewer,
        '/api/v1/command-types/REBOOT/changelog?from=2.0.0&to=1.0.0',
      );
      expect((await problem(range, 400)).code).toBe('VERSION_RANGE_INVALID');

      const audit = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type', 'actor', 'details'])
        .where('event_type', 'in', ['COMMAND_VERSION_REGISTERED', 'COMMAND_VERSION_DEPRECATED'])
        .orderBy('id')
        .execute();
      expect(
        audit.map((a) => [
          a.event_type,
          (a.details as Json).command_type,
          (a.details as Json).version,
        ]),
      ).toEqual([
        ['COMMAND_VERSION_REGISTERED', 'REBOOT', '1.0.0'],
        ['COMMAND_VERSION_REGISTERED', 'REBOOT', '2.0.0'],
        ['COMMAND_VERSION_DEPRECATED', 'REBOOT', '1.0.0'],
        ['COMMAND_VERSION_REGISTERED', 'DIAGNOSTIC', '1.0.0'],
        ['COMMAND_VERSION_DEPRECATED', 'DIAGNOSTIC', '1.0.0'],
      ]);
      expect(new Set(audit.map((a) => a.actor))).toEqual(new Set(['test admin']));
    });
  });
}
