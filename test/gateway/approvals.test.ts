/**
 * RBAC and multi-party approvals over real HTTP and a real device socket, on a hand-moved
 * clock: a REBOOT that a policy holds for two approvers is not delivered, cannot be approved
 * by its requester, counts each approver once, and reaches the connected device only after
 * the second distinct approval; any rejection rejects; an untouched approval expires (by the
 * maintenance pass, or when someone tries to decide it late). Policies match on command
 * type, device type and risk level; required roles come from role assignments, which also
 * open routes to a token whose own role does not. Fleet paths (batches, broadcasts,
 * schedules) cannot bypass a policy: they are held the same way (fleetApprovals.test.ts
 * follows them through approval). Every decision is audited, and the approval webhook
 * events are enqueued with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../gateway/index.js';
import type { ApprovalSweeper } from '../../gateway/governance/approvalSweeper.js';
import { testClock, type DeviceSocket } from '../support/device.js';
import { json, onlineDevice } from '../support/fleet.js';
import {
  REBOOT_TWO_APPROVERS,
  startApprovalsGateway,
  type ApprovalsGateway,
} from '../support/approvals.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Approval {
  approval_id: string;
  status: string;
  requested_by: string;
  required_approvals: number;
  approvals: number;
  request: { command_id: string; device_id: string; command_type: string };
  responses: { approver: string; decision: string }[];
}
interface Decision {
  approval: Approval;
  command: { command_id: string; command_type: string; status: string } | null;
}
interface Pushed {
  command: { command_id: string; command_type: string };
}

for (const dialect of CLOUD_DIALECTS) {
  describe(`approvals on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: ApprovalsGateway;
    let sweeper: ApprovalSweeper;
    let device: DeviceSocket;
    const tokens: Record<string, string> = {};
    let viewerTokenId: string;

    const post = (token: string, path: string, body: unknown = {}) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const send = (who: string, command_type: string, payload: Json = {}, deviceId = 'ap-1') =>
      post(tokens[who]!, `/api/v1/devices/${deviceId}/commands`, { command_type, payload });
    const hold = async (
      who: string,
      command_type: string,
      payload: Json = {},
      deviceId = 'ap-1',
    ) => {
      const res = await send(who, command_type, payload, deviceId);
      expect(res.status, await res.clone().text()).toBe(202);
      expect(res.headers.get('location')).toMatch(/^\/api\/v1\/approvals\/[0-9a-f-]{36}$/);
      return json<Approval>(res);
    };
    const decide = (who: string, id: string, decision: 'approve' | 'reject', body: Json = {}) =>
      post(tokens[who]!, `/api/v1/approvals/${id}/${decision}`, body);
    const code = async (res: Response, status: number) => {
      expect(res.status, await res.clone().text()).toBe(status);
      return (await json<{ code: string }>(res)).code;
    };
    const commandRow = (commandId: string) =>
      gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['command_id', 'status', 'created_by'])
        .where('command_id', '=', commandId)
        .executeTakeFirst();
    const auditOf = async (approvalId: string, commandId: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select(['event_type', 'actor', 'details', 'command_id'])
          .where((eb) =>
            eb.or([eb('command_id', '=', commandId), eb('event_type', 'like', 'APPROVAL_%')]),
          )
          .orderBy('id')
          .execute()
      )
        .filter(
          (r) =>
            r.command_id === commandId ||
            (r.details as { approval_id?: string }).approval_id === approvalId,
        )
        .map((r) => `${r.event_type}:${r.actor}`);
    /** The next command pushed to the device (acked at once). */
    const nextPushed = async () => {
      const frame = (await device.next('command')) as unknown as Pushed;
      device.send({ type: 'ack', command_id: frame.command.command_id, status: 'EXECUTED' });
      await device.next('acked');
      return frame.command;
    };

    beforeAll(async () => {
      gw = await startApprovalsGateway(dialect, clock);
      ({ sweeper } = gw);
      for (const [name, role] of [
        ['alice', 'operator'],
        ['bob', 'operator'],
        ['carol', 'operator'],
        ['dave', 'admin'],
        ['victor', 'viewer'],
      ] as const) {
        const created = await createApiToken(gw.handle.store, { name, role });
        tokens[name] = created.token;
        if (name === 'victor') viewerTokenId = created.tokenId;
      }
      // a second token of bob's: the same person
      tokens.bob2 = (
        await createApiToken(gw.handle.store, { name: 'bob', role: 'operator' })
      ).token;
      const secret = await gw.insertDevice('ap-1');
      await gw.insertDevice('ap-atm');
      await gw.handle.store.cloud
        .updateTable('edge_devices')
        .set({ device_type: 'ATM' })
        .where('device_id', '=', 'ap-atm')
        .execute();
      device = await onlineDevice(gw.url, 'ap-1', secret, clock);
      const policy = await post(
        tokens.dave!,
        '/api/v1/authorization-policies',
        REBOOT_TWO_APPROVERS,
      );
      expect(policy.status, await policy.clone().text()).toBe(201);
    });
    afterAll(async () => {
      await device?.close();
      await gw.close();
    });

    it('holds a REBOOT until two distinct approvers other than the requester approve', async () => {
      const held = await hold('alice', 'REBOOT', { delay_seconds: 5 });
      expect(held).toMatchObject({
        status: 'PENDING',
        requested_by: 'alice',
        required_approvals: 2,
        approvals: 0,
        request: { device_id: 'ap-1', command_type: 'REBOOT' },
      });
      const commandId = held.request.command_id;
      expect(await commandRow(commandId)).toBeUndefined();

      expect(await code(await decide('alice', held.approval_id, 'approve'), 403)).toBe(
        'SELF_APPROVAL_FORBIDDEN',
      );
      expect(await code(await decide('victor', held.approval_id, 'approve'), 403)).toBe(
        'NOT_AN_APPROVER',
      );

      // a command sent after the held one reaches the device first: the REBOOT is not due
      expect((await send('alice', 'DIAGNOSTIC')).status).toBe(201);
      expect((await nextPushed()).command_type).toBe('DIAGNOSTIC');

      const first = await decide('bob', held.approval_id, 'approve', { comment: 'ok' });
      expect(first.status, await first.clone().text()).toBe(200);
      expect(await json<Decision>(first)).toMatchObject({
        approval: { status: 'PENDING', approvals: 1 },
        command: null,
      });
      // bob again, with either of his tokens, counts once
      expect(await code(await decide('bob', held.approval_id, 'approve'), 409)).toBe(
        'ALREADY_RESPONDED',
      );
      expect(await code(await decide('bob2', held.approval_id, 'approve'), 409)).toBe(
        'ALREADY_RESPONDED',
      );
      expect(await commandRow(commandId)).toBeUndefined();
      expect((await send('alice', 'DIAGNOSTIC')).status).toBe(201);
      expect((await nextPushed()).command_type).toBe('DIAGNOSTIC');

      const second = await decide('carol', held.approval_id, 'approve');
      expect(second.status, await second.clone().text()).toBe(200);
      const released = await json<Decision>(second);
      expect(released.approval).toMatchObject({ status: 'EXECUTED', approvals: 2 });
      expect(released.command).toMatchObject({
        command_id: commandId,
        command_type: 'REBOOT',
        status: 'PENDING',
      });
      const pushed = await nextPushed();
      expect(pushed).toMatchObject({ command_id: commandId, command_type: 'REBOOT' });
      expect(await commandRow(commandId)).toMatchObject({
        status: 'EXECUTED',
        created_by: 'alice',
      });

      expect(await code(await decide('dave', held.approval_id, 'approve'), 409)).toBe(
        'APPROVAL_NOT_PENDING',
      );
      expect(await auditOf(held.approval_id, commandId)).toEqual([
        'APPROVAL_REQUESTED:alice',
        'APPROVAL_APPROVED:bob',
        'APPROVAL_APPROVED:carol',
        'COMMAND_CREATED:alice',
        'APPROVAL_GRANTED:carol',
        expect.stringMatching(/^COMMAND_DELIVERED:/),
        'COMMAND_EXECUTED:ap-1',
      ]);
      const events = await gw.handle.store.cloud
        .selectFrom('webhook_deliveries')
        .select(['event_type', 'payload'])
        .orderBy('sequence')
        .execute();
      const mine = events.filter(
        (e) => (e.payload as { data: Json }).data.approval_id === held.approval_id,
      );
      expect(mine.map((e) => [e.event_type, (e.payload as { data: Json }).data.decision])).toEqual([
        ['approval.requested', undefined],
        ['approval.decided', 'APPROVED'],
      ]);
    });

    it('rejects on any rejection, and lets the requester withdraw', async () => {
      const held = await hold('alice', 'REBOOT');
      expect((await decide('bob', held.approval_id, 'approve')).status).toBe(200);
      const rejected = await decide('carol', held.approval_id, 'reject', { comment: 'not now' });
      expect(rejected.status).toBe(200);
      expect((await json<Decision>(rejected)).approval.status).toBe('REJECTED');
      expect(await code(await decide('dave', held.approval_id, 'approve'), 409)).toBe(
        'APPROVAL_NOT_PENDING',
      );
      expect(await commandRow(held.request.command_id)).toBeUndefined();

      clock.advance(1000); // newest first
      const withdrawn = await hold('alice', 'REBOOT');
      const mine = await decide('alice', withdrawn.approval_id, 'reject');
      expect(mine.status).toBe(200);
      expect(await json<Decision>(mine)).toMatchObject({
        approval: { status: 'REJECTED', responses: [{ approver: 'alice', decision: 'REJECT' }] },
      });
      const list = await json<{ approvals: Approval[] }>(
        await gw.asUser(tokens.victor!, '/api/v1/approvals?status=REJECTED&limit=10'),
      );
      expect(list.approvals.map((a) => a.approval_id)).toEqual([
        withdrawn.approval_id,
        held.approval_id,
      ]);
    });

    it('expires an approval nobody decides, durably, and refuses late decisions', async () => {
      const swept = await hold('alice', 'REBOOT');
      const late = await hold('alice', 'REBOOT');
      expect((await decide('bob', late.approval_id, 'approve')).status).toBe(200);
      clock.advance(3601_000);
      // deciding after the deadline expires it on the spot
      expect(await code(await decide('carol', late.approval_id, 'approve'), 409)).toBe(
        'APPROVAL_EXPIRED',
      );
      // the maintenance pass expires the other one
      expect(await sweeper.sweep()).toBe(1);
      expect(await sweeper.sweep()).toBe(0);
      for (const id of [swept.approval_id, late.approval_id]) {
        const now = await json<Approval>(
          await gw.asUser(tokens.victor!, `/api/v1/approvals/${id}`),
        );
        expect(now.status).toBe('EXPIRED');
      }
      expect(await code(await decide('carol', swept.approval_id, 'approve'), 409)).toBe(
        'APPROVAL_NOT_PENDING',
      );
      expect(await commandRow(late.request.command_id)).toBeUndefined();
      const expired = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['details'])
        .where('event_type', '=', 'APPROVAL_EXPIRED')
        .execute();
      expect(expired.map((r) => (r.details as Json).approval_id).sort()).toEqual(
        [swept.approval_id, late.approval_id].sort(),
      );
    });

    it('matches policies on device type and risk level, taken from the command version', async () => {
      const policy = await post(tokens.dave!, '/api/v1/authorization-policies', {
        name: 'atm-medium',
        device_filter: { device_types: ['ATM'] },
        risk_level: 'MEDIUM',
        requires_approval: true,
        min_approvals: 1,
        approver_roles: ['admin'],
      });
      expect(policy.status, await policy.clone().text()).toBe(201);
      // DIAGNOSTIC is LOW by default: not covered
      expect((await send('alice', 'DIAGNOSTIC', {}, 'ap-atm')).status).toBe(201);
      const version = await post(tokens.dave!, '/api/v1/command-types/DIAGNOSTIC/versions', {
        version: '1.0.0',
        payload_schema: { type: 'object' },
        risk_level: 'MEDIUM',
      });
      expect(version.status).toBe(201);
      // now MEDIUM: held on the ATM, not on a device of another type
      const held = await hold('alice', 'DIAGNOSTIC', {}, 'ap-atm');
      expect(held.required_approvals).toBe(1);
      expect((await send('alice', 'DIAGNOSTIC', {}, 'ap-1')).status).toBe(201);
      // only admins may approve this one
      expect(await code(await decide('bob', held.approval_id, 'approve'), 403)).toBe(
        'NOT_AN_APPROVER',
      );
      const granted = await decide('dave', held.approval_id, 'approve');
      expect((await json<Decision>(granted)).approval.status).toBe('EXECUTED');

      // a disabled policy covers nothing; the change is audited with what changed
      const policyId = (await json<{ policy_id: string }>(policy)).policy_id;
      const disabled = await gw.asUser(tokens.dave!, `/api/v1/authorization-policies/${policyId}`, {
        method: 'PUT',
        body: JSON.stringify({
          name: 'atm-medium',
          device_filter: { device_types: ['ATM'] },
          risk_level: 'MEDIUM',
          requires_approval: true,
          min_approvals: 1,
          approver_roles: ['admin'],
          enabled: false,
        }),
      });
      expect(disabled.status, await disabled.clone().text()).toBe(200);
      expect((await send('alice', 'DIAGNOSTIC', {}, 'ap-atm')).status).toBe(201);
      const updated = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['details'])
        .where('event_type', '=', 'AUTHORIZATION_POLICY_UPDATED')
        .executeTakeFirstOrThrow();
      expect(updated.details).toMatchObject({ name: 'atm-medium', changed: ['enabled'] });
    });

    it('requires the roles policies name, granted through role assignments', async () => {
      expect(
        (await post(tokens.dave!, '/api/v1/roles', { role_name: 'sync_operator' })).status,
      ).toBe(201);
      const policy = await post(tokens.dave!, '/api/v1/authorization-policies', {
        name: 'sync-needs-role',
        command_type: 'SYNC_TRANSACTIONS',
        required_role: 'sync_operator',
      });
      expect(policy.status).toBe(201);
      expect(await code(await send('alice', 'SYNC_TRANSACTIONS'), 403)).toBe('ROLE_REQUIRED');
      // an assignment scoped to another command type does not count
      const other = await post(tokens.dave!, '/api/v1/role-assignments', {
        principal_type: 'user',
        principal_id: 'alice',
        role_name: 'sync_operator',
        scope: { command_types: ['DIAGNOSTIC'] },
      });
      expect(other.status, await other.clone().text()).toBe(201);
      expect(await code(await send('alice', 'SYNC_TRANSACTIONS'), 403)).toBe('ROLE_REQUIRED');
      const otherId = (await json<{ assignment_id: string }>(other)).assignment_id;
      expect(
        (await gw.asUser(tokens.dave!, `/api/v1/role-assignments/${otherId}`, { method: 'DELETE' }))
          .status,
      ).toBe(204);
      const granted = await post(tokens.dave!, '/api/v1/role-assignments', {
        principal_type: 'user',
        principal_id: 'alice',
        role_name: 'sync_operator',
        scope: { command_types: ['SYNC_TRANSACTIONS'] },
      });
      expect(granted.status).toBe(201);
      expect((await send('alice', 'SYNC_TRANSACTIONS')).status).toBe(201);
      // a role in use cannot be deleted; an unknown one cannot be assigned
      expect(
        await code(
          await gw.asUser(tokens.dave!, '/api/v1/roles/sync_operator', { method: 'DELETE' }),
          409,
        ),
      ).toBe('ROLE_IN_USE');
      expect(
        await code(
          await post(tokens.dave!, '/api/v1/role-assignments', {
            principal_type: 'user',
            principal_id: 'alice',
            role_name: 'nobody',
          }),
          422,
        ),
      ).toBe('UNKNOWN_ROLE');
      // operators may not hand out roles
      expect(
        (
          await post(tokens.alice!, '/api/v1/role-assignments', {
            principal_type: 'user',
            principal_id: 'alice',
            role_name: 'admin',
          })
        ).status,
      ).toBe(403);
    });

    it('opens routes to a token through an assigned system role, and closes them again', async () => {
      expect((await send('victor', 'DIAGNOSTIC')).status).toBe(403);
      const assigned = await post(tokens.dave!, '/api/v1/role-assignments', {
        principal_type: 'token',
        principal_id: viewerTokenId,
        role_name: 'operator',
      });
      expect(assigned.status).toBe(201);
      const sent = await send('victor', 'DIAGNOSTIC');
      expect(sent.status, await sent.clone().text()).toBe(201);
      const commandId = (await json<{ command_id: string }>(sent)).command_id;
      const row = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['actor', 'actor_role'])
        .where('command_id', '=', commandId)
        .where('event_type', '=', 'COMMAND_CREATED')
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ actor: 'victor', actor_role: 'operator' });
      // admin routes stay closed: the assignment gives operator, not admin
      expect((await gw.asUser(tokens.victor!, '/api/v1/rate-limits')).status).toBe(403);
      const id = (await json<{ assignment_id: string }>(assigned)).assignment_id;
      await gw.asUser(tokens.dave!, `/api/v1/role-assignments/${id}`, { method: 'DELETE' });
      expect((await send('victor', 'DIAGNOSTIC')).status).toBe(403);
      const audit = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type'])
        .where('event_type', 'in', ['ROLE_ASSIGNED', 'ROLE_UNASSIGNED', 'ROLE_CREATED'])
        .execute();
      expect(audit.length).toBeGreaterThanOrEqual(5);
    });

    it('holds a batch, a broadcast and a schedule run rather than let them slip past a policy', async () => {
      const fleetRows = async () => ({
        batches: await gw.handle.store.cloud
          .selectFrom('command_batches')
          .select('batch_id')
          .execute(),
        broadcasts: await gw.handle.store.cloud
          .selectFrom('command_broadcasts')
          .select('broadcast_id')
          .execute(),
        commands: await gw.handle.store.cloud
          .selectFrom('device_commands')
          .select('command_id')
          .where((eb) =>
            eb.or([eb('batch_id', 'is not', null), eb('broadcast_id', 'is not', null)]),
          )
          .execute(),
      });
      const held = async (res: Response) => {
        expect(res.status, await res.clone().text()).toBe(202);
        const approval = await json<Approval & { request: Json }>(res);
        expect(res.headers.get('location')).toBe(`/api/v1/approvals/${approval.approval_id}`);
        return approval;
      };
      const batch = await held(
        await post(tokens.alice!, '/api/v1/command-batches', {
          device_ids: ['ap-1'],
          commands: [{ command_type: 'REBOOT', payload: {} }],
        }),
      );
      expect(batch).toMatchObject({
        status: 'PENDING',
        requested_by: 'alice',
        required_approvals: 2,
        request: {
          kind: 'command_batch',
          batch_id: expect.any(String) as unknown,
          device_ids: ['ap-1'],
          commands: [{ command_type: 'REBOOT', risk_level: 'HIGH' }],
          policy_name: 'reboot-two-approvers',
          approver_roles: ['operator'],
          requested_role: 'operator',
        },
      });
      const broadcast = await held(
        await post(tokens.alice!, '/api/v1/command-broadcasts', {
          command: { command_type: 'REBOOT', payload: {} },
          target: { all_devices: true },
        }),
      );
      expect(broadcast.request).toMatchObject({
        kind: 'command_broadcast',
        broadcast_id: expect.any(String) as unknown,
        command: { command_type: 'REBOOT' },
        target: { all_devices: true },
      });
      // a schedule may be created: its runs act as the system, and each is held in turn
      const schedule = await post(tokens.alice!, '/api/v1/command-schedules', {
        name: 'nightly reboot',
        schedule_type: 'CRON',
        cron_expression: '0 3 * * *',
        target: {
          kind: 'COMMAND',
          device_ids: ['ap-1'],
          command: { command_type: 'REBOOT', payload: {} },
        },
      });
      expect(schedule.status, await schedule.clone().text()).toBe(201);
      expect(await fleetRows()).toEqual({ batches: [], broadcasts: [], commands: [] });
      // withdrawn, they never exist
      for (const approval of [batch, broadcast]) {
        const withdrawn = await decide('alice', approval.approval_id, 'reject');
        expect((await json<Decision>(withdrawn)).approval.status).toBe('REJECTED');
      }
      expect(await fleetRows()).toEqual({ batches: [], broadcasts: [], commands: [] });
    });
  });
}
