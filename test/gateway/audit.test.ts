/**
 * The command audit API over real HTTP, on a hand-moved clock: exact filters and keyset
 * pages, full-text search over event details (the caller's words are never SQL), streamed
 * JSONL and CSV exports (content types, RFC 4180 escaping, formula neutralising), retention
 * policies and a purge that removes exactly the rows older than each policy's retention —
 * the row at the cutoff stays, the one a millisecond older goes — and audits itself with the
 * count; the scheduled purge runs once per interval; viewers, operators and admins get what
 * their role allows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetentionJob } from '../../gateway/audit/retentionJob.js';
import { auditRoutes } from '../../gateway/audit/module.js';
import {
  appendCommandAudit,
  type CommandAuditEntry,
} from '../../gateway/commands/store/commands/appendCommandAudit.js';
import { type CommandActor } from '../../gateway/commands/store/commands/command.js';
import { testClock } from '../support/device.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface AuditRow extends Json {
  id: number;
  event_type: string;
  actor: string | null;
  created_at: string;
  details: Json;
}

const DAY = 86_400_000;
const BATCH = '11111111-1111-4111-8111-111111111111';
const BROADCAST = '22222222-2222-4222-8222-222222222222';
const COMMAND_A = '33333333-3333-4333-8333-333333333333';
const COMMAND_B = '44444444-4444-4444-8444-444444444444';

/** A minimal RFC 4180 reader (quoted fields, doubled quotes, CRLF inside quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  expect(field).toBe('');
  expect(row).toEqual([]);
  return rows;
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`audit and retention on ${dialect.name}`, () => {
    const clock = testClock();
    const t0 = clock.now().getTime();
    let gw: TestGateway;
    let job: RetentionJob;
    let operator: string;
    let viewer: string;

    const alice: CommandActor = { actor: 'alice', role: 'operator', sourceIp: '10.0.0.7' };
    const device: CommandActor = { actor: 'pos-1', role: 'device' };
    const tricky: CommandActor = { actor: 'eve, "the auditor"', role: 'admin' };
    const formula: CommandActor = { actor: '=HYPERLINK("x")', role: 'admin' };
    const seed = (actor: CommandActor, at: number, entry: CommandAuditEntry) =>
      appendCommandAudit(gw.handle.store, actor, [entry], new Date(at));
    const list = async (query: string, token = operator) => {
      const res = await gw.asUser(token, `/api/v1/audit?${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as { events: AuditRow[]; next_cursor: string | null };
    };
    const types = async (query: string) => (await list(query)).events.map((e) => e.event_type);
    const remaining = async () =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select(['event_type', 'created_at', 'details'])
          .orderBy('id')
          .execute()
      ).map((r) => r.event_type);

    beforeAll(async () => {
      gw = await startTestGateway(dialect, {
        now: clock.now,
        routes: [
          auditRoutes({
            intervalMs: DAY,
            manual: true,
            onRetentionJob: (j) => (job = j),
          }),
        ],
      });
      operator = await gw.token('operator');
      viewer = await gw.token('viewer');
      // oldest first: 40 and 35 days ago, 31 days ago (one ms either side of a cutoff), today
      await seed(alice, t0 - 40 * DAY, {
        event: 'COMMAND_CREATED',
        deviceId: 'pos-1',
        commandId: COMMAND_A,
        details: { command_type: 'REBOOT', reason: 'weekly maintenance window' },
      });
      await seed(device, t0 - 35 * DAY, {
        event: 'COMMAND_FAILED',
        deviceId: 'pos-1',
        commandId: COMMAND_A,
        details: { error: 'Disk full on terminal', retry_count: 2 },
      });
      await seed(alice, t0 - 30 * DAY - 1, {
        event: 'COMMAND_DELIVERED',
        deviceId: 'pos-2',
        commandId: COMMAND_B,
        details: { channel: 'socket' },
      });
      await seed(alice, t0 - 30 * DAY, {
        event: 'COMMAND_DELIVERED',
        deviceId: 'pos-2',
        commandId: COMMAND_B,
        details: { channel: 'poll' },
      });
      await seed(alice, t0 - 2 * DAY, {
        event: 'BATCH_CREATED',
        batchId: BATCH,
        details: { name: 'nightly', devices: 2 },
      });
      await seed(tricky, t0 - DAY, {
        event: 'BROADCAST_CREATED',
        broadcastId: BROADCAST,
        details: { note: 'line one\nline "two", with a comma' },
      });
      await seed(formula, t0 - 1000, {
        event: 'DEVICE_UPDATED',
        deviceId: 'pos-3',
        details: { device_type: 'kiosk' },
      });
    });
    afterAll(async () => {
      await gw.close();
    });

    it('lets operators and admins read the audit log, and only admins manage retention', async () => {
      for (const path of ['/api/v1/audit', '/api/v1/audit/export?format=csv'])
        expect((await gw.asUser(viewer, path)).status).toBe(403);
      for (const token of [viewer, operator]) {
        expect((await gw.asUser(token, '/api/v1/audit/retention-policies')).status).toBe(403);
        expect((await gw.asUser(token, '/api/v1/audit/purge', { method: 'POST' })).status).toBe(
          403,
        );
        const create = await gw.asUser(token, '/api/v1/audit/retention-policies', {
          method: 'POST',
          body: JSON.stringify({ name: 'x', table_name: 'command_audit_log', retention_days: 1 }),
        });
        expect(create.status).toBe(403);
        expect(((await create.json()) as { code: string }).code).toBe('FORBIDDEN');
      }
      expect((await fetch(`${gw.url}/api/v1/audit`)).status).toBe(401);
      expect((await list('limit=1', operator)).events).toHaveLength(1);
      expect((await list('limit=1', gw.adminToken)).events).toHaveLength(1);
      expect((await gw.asUser(gw.adminToken, '/api/v1/audit/retention-policies')).status).toBe(200);
    });

    it('filters by device, command, actor, event types, batch, broadcast and time, newest first in keyset pages', async () => {
      expect(await types('device_id=pos-1')).toEqual(['COMMAND_FAILED', 'COMMAND_CREATED']);
      expect(await types(`command_id=${COMMAND_B}`)).toEqual([
        'COMMAND_DELIVERED',
        'COMMAND_DELIVERED',
      ]);
      expect(await types('actor=pos-1')).toEqual(['COMMAND_FAILED']);
      expect(await types('event_type=COMMAND_CREATED,BATCH_CREATED')).toEqual([
        'BATCH_CREATED',
        'COMMAND_CREATED',
      ]);
      expect(await types(`batch_id=${BATCH}`)).toEqual(['BATCH_CREATED']);
      expect(await types(`broadcast_id=${BROADCAST}`)).toEqual(['BROADCAST_CREATED']);
      const from = new Date(t0 - 30 * DAY).toISOString();
      const to = new Date(t0 - DAY).toISOString();
      // from is inclusive (the row at exactly −30 days), to exclusive (the row at −1 day)
      expect(await types(`from=${from}&to=${to}`)).toEqual(['BATCH_CREATED', 'COMMAND_DELIVERED']);
      expect(await types(`device_id=pos-2&from=${from}`)).toEqual(['COMMAND_DELIVERED']);

      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await list(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.events.length).toBeLessThanOrEqual(3);
        seen.push(...page.events.map((e) => e.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toHaveLength(7);
      expect([...seen].sort((a, b) => b - a)).toEqual(seen);

      const bad = async (query: string) =>
        (await gw.asUser(operator, `/api/v1/audit?${query}`)).status;
      expect(await bad('cursor=bm9wZQ')).toBe(400);
      expect(await bad('command_id=not-a-uuid')).toBe(400);
      expect(await bad('event_type=lower')).toBe(400);
      expect(await bad('from=yesterday')).toBe(400);
      expect(await bad('surprise=1')).toBe(400);
    });

    it('searches the words of event details, actors and event types in full text', async () => {
      expect(await types('q=disk full')).toEqual(['COMMAND_FAILED']);
      expect(await types('q=DISK')).toEqual(['COMMAND_FAILED']);
      expect(await types('q=weekly maintenance')).toEqual(['COMMAND_CREATED']);
      expect(await types('q=maintenance disk')).toEqual([]); // every word must appear
      expect(await types('q=socket')).toEqual(['COMMAND_DELIVERED']);
      expect(await types('q=alice&device_id=pos-2')).toEqual([
        'COMMAND_DELIVERED',
        'COMMAND_DELIVERED',
      ]);
      expect(await types('q=kiosk')).toEqual(['DEVICE_UPDATED']);
      const injection = encodeURIComponent("x'); DROP TABLE command_audit_log; --");
      expect(await types(`q=${injection}`)).toEqual([]);
      expect(await remaining()).toHaveLength(7);
    });

    it('exports the filtered rows as JSON lines and as escaped CSV, streamed', async () => {
      const all = (await list('limit=100')).events;
      const jsonl = await gw.asUser(operator, '/api/v1/audit/export?format=jsonl');
      expect(jsonl.status).toBe(200);
      expect(jsonl.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      expect(jsonl.headers.get('content-disposition')).toMatch(
        /^attachment; filename="audit-\d{8}T\d{6}Z\.jsonl"$/,
      );
      const text = await jsonl.text();
      expect(text.endsWith('\n')).toBe(true);
      expect(
        text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as AuditRow),
      ).toEqual(all);

      const filtered = await gw.asUser(operator, '/api/v1/audit/export?device_id=pos-1');
      const lines = (await filtered.text()).trimEnd().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as AuditRow).event_type)).toEqual([
        'COMMAND_FAILED',
        'COMMAND_CREATED',
      ]);

      const csv = await gw.asUser(operator, '/api/v1/audit/export?format=csv');
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      const rows = parseCsv(await csv.text());
      expect(rows[0]).toEqual([
        'id',
        'created_at',
        'event_type',
        'actor',
        'actor_role',
        'device_id',
        'command_id',
        'batch_id',
        'broadcast_id',
        'source_ip',
        'details',
      ]);
      expect(rows).toHaveLength(all.length + 1);
      expect(rows.slice(1).map((r) => Number(r[0]))).toEqual(all.map((e) => e.id));
      const byType = (type: string) => rows.find((r) => r[2] === type)!;
      const broadcast = byType('BROADCAST_CREATED');
      expect(broadcast[3]).toBe('eve, "the auditor"');
      expect(JSON.parse(broadcast[10]!)).toEqual({ note: 'line one\nline "two", with a comma' });
      expect(byType('DEVICE_UPDATED')[3]).toBe(`'=HYPERLINK("x")`); // not a formula
      expect(byType('COMMAND_CREATED')[9]).toBe('10.0.0.7');
      expect(byType('BATCH_CREATED')[7]).toBe(BATCH);

      const limited = await gw.asUser(operator, '/api/v1/audit/export?format=csv&limit=2');
      expect(parseCsv(await limited.text())).toHaveLength(3);
      expect((await gw.asUser(operator, '/api/v1/audit/export?format=xml')).status).toBe(400);
    });

    it('purges exactly the rows older than each policy keeps, and audits the purge with its count', async () => {
      const post = (body: Json) =>
        gw.asUser(gw.adminToken, '/api/v1/audit/retention-policies', {
          method: 'POST',
          body: JSON.stringify(body),
        });
      const noTypes = await post({
        name: 'logs',
        table_name: 'workflow_execution_logs',
        retention_days: 7,
        event_types: ['X'],
      });
      expect(noTypes.status).toBe(422);
      expect(((await noTypes.json()) as { code: string }).code).toBe('EVENT_TYPES_NOT_SUPPORTED');
      expect(
        (await post({ name: 'bad', table_name: 'api_tokens', retention_days: 7 })).status,
      ).toBe(422);
      expect(
        (await post({ name: 'bad', table_name: 'command_audit_log', retention_days: 0 })).status,
      ).toBe(422);

      const created = await post({
        name: 'commands 30 days',
        table_name: 'command_audit_log',
        retention_days: 30,
      });
      expect(created.status).toBe(201);
      const policy = (await created.json()) as Json & { policy_id: string };
      expect(policy).toMatchObject({
        table_name: 'command_audit_log',
        retention_days: 30,
        event_types: [],
        enabled: true,
        archive: false,
        last_run_at: null,
      });
      expect(
        (
          await post({
            name: 'commands 30 days',
            table_name: 'command_audit_log',
            retention_days: 9,
          })
        ).status,
      ).toBe(409);
      // only BATCH_CREATED rows, after one day: takes the batch row (two days old)
      const batches = (await (
        await post({
          name: 'batches 1 day',
          table_name: 'command_audit_log',
          retention_days: 1,
          event_types: ['BATCH_CREATED'],
        })
      ).json()) as { policy_id: string };
      // disabled policies do nothing
      const off = await post({
        name: 'everything 1 day off',
        table_name: 'command_audit_log',
        retention_days: 1,
        enabled: false,
      });
      expect(off.status).toBe(201);

      const purge = await gw.asUser(gw.adminToken, '/api/v1/audit/purge', { method: 'POST' });
      expect(purge.status).toBe(200);
      const purges = ((await purge.json()) as { purges: Json[] }).purges;
      expect(purges).toEqual(
        expect.arrayContaining([
          {
            policy_id: policy.policy_id,
            name: 'commands 30 days',
            table_name: 'command_audit_log',
            cutoff: new Date(t0 - 30 * DAY).toISOString(),
            deleted: 3,
          },
          {
            policy_id: batches.policy_id,
            name: 'batches 1 day',
            table_name: 'command_audit_log',
            cutoff: new Date(t0 - DAY).toISOString(),
            deleted: 1,
          },
        ]),
      );
      expect(purges).toHaveLength(2);

      // kept: the row at exactly −30 days and everything younger but the batch row
      const left = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type', 'actor', 'details', 'created_at'])
        .orderBy('id')
        .execute();
      const kept = left.filter((r) => !String(r.event_type).startsWith('RETENTION_'));
      expect(kept.map((r) => [r.event_type, r.actor])).toEqual([
        ['COMMAND_DELIVERED', 'alice'],
        ['BROADCAST_CREATED', 'eve, "the auditor"'],
        ['DEVICE_UPDATED', '=HYPERLINK("x")'],
        ['AUDIT_PURGED', 'test admin'],
        ['AUDIT_PURGED', 'test admin'],
      ]);
      expect(JSON.stringify(kept[0]!.details)).toContain('poll');
      const purged = (await list('event_type=AUDIT_PURGED')).events;
      expect(purged.map((p) => p.details.deleted).sort()).toEqual([1, 3]);
      expect(purged.find((p) => p.details.deleted === 3)!.details).toMatchObject({
        policy_id: policy.policy_id,
        table_name: 'command_audit_log',
        retention_days: 30,
        cutoff: new Date(t0 - 30 * DAY).toISOString(),
      });
      expect(purged[0]!.actor_role).toBe('admin');

      // again at once: nothing is older now, so nothing goes and nothing more is audited
      const again = await gw.asUser(gw.adminToken, '/api/v1/audit/purge', { method: 'POST' });
      const counts = ((await again.json()) as { purges: { deleted: number }[] }).purges;
      expect(counts.map((c) => c.deleted)).toEqual([0, 0]);
      expect((await list('event_type=AUDIT_PURGED')).events).toHaveLength(2);
      const read = (await (
        await gw.asUser(gw.adminToken, `/api/v1/audit/retention-policies/${policy.policy_id}`)
      ).json()) as Json;
      expect(read.last_run_at).toBe(clock.now().toISOString());
    });

    it('runs the scheduled purge once per interval, skipping policies run within it', async () => {
      // everything a purge just ran: the schedule has nothing to do yet
      expect(await job.run({ actor: 'retention', role: 'system' }, { scheduled: true })).toEqual(
        [],
      );
      clock.advance(DAY);
      await appendCommandAudit(
        gw.handle.store,
        alice,
        [{ event: 'TEMPLATE_CREATED', details: { name: 'fresh' } }],
        clock.now(),
      );
      // a day on: the BROADCAST_CREATED row (now 2 days old) is not a batch, stays; the
      // 30-day policy now takes the COMMAND_DELIVERED row that was exactly at its cutoff
      const results = await job.run({ actor: 'retention', role: 'system' }, { scheduled: true });
      expect(results?.map((r) => ('deleted' in r ? [r.name, r.deleted] : r))).toEqual([
        ['batches 1 day', 0],
        ['commands 30 days', 1],
      ]);
      const scheduled = (await list('event_type=AUDIT_PURGED&actor=retention')).events;
      expect(scheduled).toHaveLength(1);
      expect(scheduled[0]).toMatchObject({ actor_role: 'system', details: { deleted: 1 } });
      expect(await types('event_type=COMMAND_DELIVERED')).toEqual([]);
    });

    it('changes and deletes policies, auditing each change', async () => {
      const policies = (await (
        await gw.asUser(gw.adminToken, '/api/v1/audit/retention-policies')
      ).json()) as { policies: (Json & { policy_id: string; name: string })[] };
      expect(policies.policies.map((p) => p.name)).toEqual([
        'batches 1 day',
        'commands 30 days',
        'everything 1 day off',
      ]);
      const target = policies.policies[1]!;
      const patch = (body: Json) =>
        gw.asUser(gw.adminToken, `/api/v1/audit/retention-policies/${target.policy_id}`, {
          method: 'PATCH',
          body: JSON.stringify(body),
        });
      expect(await (await patch({ retention_days: 90, enabled: false })).json()).toMatchObject({
        retention_days: 90,
        enabled: false,
      });
      expect((await patch({})).status).toBe(422);
      expect(
        (
          await gw.asUser(gw.adminToken, `/api/v1/audit/retention-policies/${target.policy_id}`, {
            method: 'DELETE',
          })
        ).status,
      ).toBe(204);
      expect(
        (await gw.asUser(gw.adminToken, `/api/v1/audit/retention-policies/${target.policy_id}`))
          .status,
      ).toBe(404);
      expect(
        await types(
          'event_type=RETENTION_POLICY_CREATED,RETENTION_POLICY_UPDATED,RETENTION_POLICY_DELETED',
        ),
      ).toEqual([
        'RETENTION_POLICY_DELETED',
        'RETENTION_POLICY_UPDATED',
        'RETENTION_POLICY_CREATED',
        'RETENTION_POLICY_CREATED',
        'RETENTION_POLICY_CREATED',
      ]);
    });
  });
}
