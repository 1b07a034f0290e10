/**
 * Fleet operations held for approval, over real HTTP and a real device socket, on a
 * hand-moved clock: a batch, a broadcast, a template application and a schedule's run whose
 * REBOOTs a policy holds for two approvers create nothing — no batch, broadcast or command
 * row — until two distinct approvers other than the requester approve; then the batch or
 * broadcast exists with the id its approval reserved, is started at once, and its commands
 * reach the devices. Any rejection, a withdrawal or the deadline means it never exists. The
 * approver must hold an approver role for every command type of the request. Every step is
 * audited under the reserved id, and the approval webhook events say what is held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../gateway/index.js';
import type { ApprovalSweeper } from '../../gateway/governance/approvalSweeper.js';
import type { FleetDriver } from '../../gateway/fleet/driver.js';
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
  request: Json & { kind: string; batch_id?: string; broadcast_id?: string };
  result: Json | null;
}
interface Decision {
  approval: Approval;
  command: Json | null;
}
interface Pushed {
  command: { command_id: string; command_type: string };
}
interface Execution {
  status: string;
  result: Json;
}

const DEVICES = ['fa-1', 'fa-2'];
const REBOOT = { command_type: 'REBOOT', payload: { reason: 'patch' } };

for (const dialect of CLOUD_DIALECTS) {
  describe(`fleet operations held for approval on ${dialect.name}`, () => {
    const clock = testClock();
    let gw: ApprovalsGateway;
    let fleet: FleetDriver;
    let sweeper: ApprovalSweeper;
    let device: DeviceSocket;
    const tokens: Record<string, string> = {};

    const post = (who: string, path: string, body: unknown = {}) =>
      gw.asUser(tokens[who]!, path, { method: 'POST', body: JSON.stringify(body) });
    const get = (path: string) => gw.asUser(tokens.victor!, path);
    const decide = (who: string, id: string, decision: 'approve' | 'reject') =>
      post(who, `/api/v1/approvals/${id}/${decision}`);
    const decided = async (who: string, id: string, decision: 'approve' | 'reject') => {
      const res = await decide(who, id, decision);
      expect(res.status, await res.clone().text()).toBe(200);
      return json<Decision>(res);
    };
    const code = async (res: Response, status: number) => {
      expect(res.status, await res.clone().text()).toBe(status);
      return (await json<{ code: string }>(res)).code;
    };
    /** The approval a 202 answered with (its Location checked). */
    const heldBy = async (res: Response) => {
      expect(res.status, await res.clone().text()).toBe(202);
      const approval = await json<Approval>(res);
      expect(res.headers.get('location')).toBe(`/api/v1/approvals/${approval.approval_id}`);
      expect(approval.status).toBe('PENDING');
      return approval;
    };
    const batchRow = (batchId: string) =>
      gw.handle.store.cloud
        .selectFrom('command_batches')
        .select(['batch_id', 'status', 'created_by', 'execution_mode', 'total_commands'])
        .where('batch_id', '=', batchId)
        .executeTakeFirst();
    const broadcastRow = (broadcastId: string) =>
      gw.handle.store.cloud
        .selectFrom('command_broadcasts')
        .select(['broadcast_id', 'status', 'created_by', 'command_type'])
        .where('broadcast_id', '=', broadcastId)
        .executeTakeFirst();
    const commandsOf = (column: 'batch_id' | 'broadcast_id', id: string) =>
      gw.handle.store.cloud
        .selectFrom('device_commands')
        .select(['command_id', 'device_id', 'command_type', 'status', 'created_by'])
        .where(column, '=', id)
        .orderBy('device_id')
        .orderBy('batch_sequence')
        .execute();
    const auditOf = async (column: 'batch_id' | 'broadcast_id', id: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('command_audit_log')
          .select(['event_type', 'actor', 'details'])
          .where(column, '=', id)
          .where((eb) =>
            eb.or([
              eb('event_type', 'like', 'APPROVAL_%'),
              eb('event_type', 'like', 'BATCH_%'),
              eb('event_type', 'like', 'BROADCAST_%'),
              eb('event_type', 'in', ['TEMPLATE_APPLIED', 'SCHEDULE_FIRED']),
            ]),
          )
          .orderBy('id')
          .execute()
      ).map((r) => `${r.event_type}:${r.actor}`);
    const eventsOf = async (approvalId: string) =>
      (
        await gw.handle.store.cloud
          .selectFrom('webhook_deliveries')
          .select(['event_type', 'payload'])
          .orderBy('sequence')
          .execute()
      )
        .map((e) => ({ type: e.event_type, data: (e.payload as { data: Json }).data }))
        .filter((e) => e.data.approval_id === approvalId);
    /** The next command pushed to fa-1's socket. */
    const nextPushed = async () => ((await device.next('command')) as unknown as Pushed).command;

    beforeAll(async () => {
      gw = await startApprovalsGateway(dialect, clock);
      ({ fleet, sweeper } = gw);
      for (const [name, role] of [
        ['alice', 'operator'],
        ['bob', 'operator'],
        ['carol', 'operator'],
        ['dave', 'admin'],
        ['victor', 'viewer'],
        ['erin', 'viewer'],
        ['frank', 'viewer'],
      ] as const)
        tokens[name] = (await createApiToken(gw.handle.store, { name, role })).token;
      const secret = await gw.insertDevice('fa-1');
      await gw.insertDevice('fa-2');
      device = await onlineDevice(gw.url, 'fa-1', secret, clock);
      const policy = await post('dave', '/api/v1/authorization-policies', REBOOT_TWO_APPROVERS);
      expect(policy.status, await policy.clone().text()).toBe(201);
    });
    afterAll(async () => {
      await device?.close();
      await gw.close();
    });

    it('holds a batch of REBOOTs until two distinct approvers approve, then runs it', async () => {
      const held = await heldBy(
        await post('alice', '/api/v1/command-batches', {
          name: 'reboot both',
          execution_mode: 'PARALLEL',
          device_ids: DEVICES,
          commands: [REBOOT],
        }),
      );
      expect(held).toMatchObject({
        requested_by: 'alice',
        required_approvals: 2,
        approvals: 0,
        request: {
          kind: 'command_batch',
          name: 'reboot both',
          execution_mode: 'PARALLEL',
          device_ids: DEVICES,
          commands: [{ ...REBOOT, risk_level: 'HIGH', command_version: null }],
          risk_level: 'HIGH',
          requested_role: 'operator',
          approver_roles: ['operator'],
          policy_name: 'reboot-two-approvers',
        },
      });
      const batchId = held.request.batch_id!;
      expect(batchId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await batchRow(batchId)).toBeUndefined();
      expect(await commandsOf('batch_id', batchId)).toEqual([]);
      expect((await get(`/api/v1/command-batches/${batchId}`)).status).toBe(404);

      expect(await code(await decide('alice', held.approval_id, 'approve'), 403)).toBe(
        'SELF_APPROVAL_FORBIDDEN',
      );
      expect(await code(await decide('victor', held.approval_id, 'approve'), 403)).toBe(
        'NOT_AN_APPROVER',
      );
      const first = await decided('bob', held.approval_id, 'approve');
      expect(first).toMatchObject({ approval: { status: 'PENDING', approvals: 1 }, command: null });
      expect(await code(await decide('bob', held.approval_id, 'approve'), 409)).toBe(
        'ALREADY_RESPONDED',
      );
      expect(await batchRow(batchId)).toBeUndefined();

      const second = await decided('carol', held.approval_id, 'approve');
      expect(second.approval).toMatchObject({
        status: 'EXECUTED',
        approvals: 2,
        result: { batch_id: batchId, approved_by: ['bob', 'carol'] },
      });
      // created by the requester with the reserved id, and started by the decision itself
      expect(await batchRow(batchId)).toMatchObject({
        status: 'IN_PROGRESS',
        created_by: 'alice',
        execution_mode: 'PARALLEL',
        total_commands: 2,
      });
      const commands = await commandsOf('batch_id', batchId);
      expect(commands.map((c) => [c.device_id, c.command_type, c.created_by])).toEqual([
        ['fa-1', 'REBOOT', 'alice'],
        ['fa-2', 'REBOOT', 'alice'],
      ]);
      for (const c of commands) expect(['PENDING', 'DELIVERED']).toContain(c.status);
      // and the connected device gets its REBOOT
      const pushed = await nextPushed();
      expect(pushed).toEqual(
        expect.objectContaining({ command_id: commands[0]!.command_id, command_type: 'REBOOT' }),
      );
      device.send({ type: 'ack', command_id: pushed.command_id, status: 'EXECUTED' });
      await device.next('acked');
      await fleet.settle();
      const batch = await json<{ status: string; progress: Json }>(
        await get(`/api/v1/command-batches/${batchId}`),
      );
      expect(batch.progress).toMatchObject({ EXECUTED: 1 });

      expect(await auditOf('batch_id', batchId)).toEqual([
        'APPROVAL_REQUESTED:alice',
        'APPROVAL_APPROVED:bob',
        'APPROVAL_APPROVED:carol',
        'BATCH_CREATED:alice',
        'APPROVAL_GRANTED:carol',
      ]);
      const events = await eventsOf(held.approval_id);
      expect(events).toEqual([
        {
          type: 'approval.requested',
          data: expect.objectContaining({
            command_id: null,
            device_id: null,
            command_type: 'REBOOT',
            requested_by: 'alice',
            required_approvals: 2,
            details: expect.objectContaining({
              batch_id: batchId,
              device_count: 2,
              policy: 'reboot-two-approvers',
            }) as unknown,
          }) as unknown,
        },
        {
          type: 'approval.decided',
          data: expect.objectContaining({
            decision: 'APPROVED',
            decided_by: 'carol',
            details: expect.objectContaining({ batch_id: batchId }) as unknown,
          }) as unknown,
        },
      ]);
    });

    it('holds a broadcast until two distinct approvers approve, then rolls it out', async () => {
      const held = await heldBy(
        await post('alice', '/api/v1/command-broadcasts', {
          command: REBOOT,
          target: { device_ids: DEVICES },
          failure_threshold: 0.5,
        }),
      );
      expect(held.request).toMatchObject({
        kind: 'command_broadcast',
        command: { ...REBOOT, max_retries: 3, expires_in_seconds: 3600, risk_level: 'HIGH' },
        target: { device_ids: DEVICES },
        rollout: { phases: [100], wait_seconds: 0 },
        failure_threshold: 0.5,
      });
      const broadcastId = held.request.broadcast_id!;
      expect(await broadcastRow(broadcastId)).toBeUndefined();
      expect(await commandsOf('broadcast_id', broadcastId)).toEqual([]);

      expect(await code(await decide('alice', held.approval_id, 'approve'), 403)).toBe(
        'SELF_APPROVAL_FORBIDDEN',
      );
      await decided('bob', held.approval_id, 'approve');
      expect(await broadcastRow(broadcastId)).toBeUndefined();
      // an admin holds the operator role
      const granted = await decided('dave', held.approval_id, 'approve');
      expect(granted.approval).toMatchObject({
        status: 'EXECUTED',
        result: { broadcast_id: broadcastId, approved_by: ['bob', 'dave'] },
      });
      expect(await broadcastRow(broadcastId)).toMatchObject({
        status: 'IN_PROGRESS',
        created_by: 'alice',
        command_type: 'REBOOT',
      });
      const commands = await commandsOf('broadcast_id', broadcastId);
      expect(commands.map((c) => [c.device_id, c.created_by])).toEqual([
        ['fa-1', 'alice'],
        ['fa-2', 'alice'],
      ]);
      const pushed = await nextPushed();
      expect(pushed.command_id).toBe(commands[0]!.command_id);
      device.send({ type: 'ack', command_id: pushed.command_id, status: 'EXECUTED' });
      await device.next('acked');
      expect(await auditOf('broadcast_id', broadcastId)).toEqual([
        'APPROVAL_REQUESTED:alice',
        'APPROVAL_APPROVED:bob',
        'APPROVAL_APPROVED:dave',
        'BROADCAST_CREATED:alice',
        'APPROVAL_GRANTED:dave',
        // started after the decision's commit, as its requester
        'BROADCAST_PHASE_STARTED:alice',
      ]);
      expect((await eventsOf(held.approval_id)).map((e) => e.data.details)).toEqual([
        expect.objectContaining({ broadcast_id: broadcastId }),
        expect.objectContaining({ broadcast_id: broadcastId }),
      ]);
    });

    it('never creates a held batch or broadcast that is rejected, withdrawn or expires', async () => {
      const rejected = await heldBy(
        await post('alice', '/api/v1/command-batches', { device_ids: DEVICES, commands: [REBOOT] }),
      );
      await decided('bob', rejected.approval_id, 'approve');
      const rejection = await decided('carol', rejected.approval_id, 'reject');
      expect(rejection.approval).toMatchObject({
        status: 'REJECTED',
        result: { rejected_by: 'carol', withdrawn: false },
      });
      expect(await code(await decide('dave', rejected.approval_id, 'approve'), 409)).toBe(
        'APPROVAL_NOT_PENDING',
      );

      const withdrawn = await heldBy(
        await post('alice', '/api/v1/command-broadcasts', {
          command: REBOOT,
          target: { all_devices: true },
        }),
      );
      expect((await decided('alice', withdrawn.approval_id, 'reject')).approval).toMatchObject({
        status: 'REJECTED',
        result: { withdrawn: true },
      });

      const expired = await heldBy(
        await post('alice', '/api/v1/command-batches', {
          device_ids: ['fa-2'],
          commands: [REBOOT],
        }),
      );
      await decided('bob', expired.approval_id, 'approve');
      clock.advance(3601_000);
      expect(await sweeper.sweep()).toBe(1);
      expect(await code(await decide('carol', expired.approval_id, 'approve'), 409)).toBe(
        'APPROVAL_NOT_PENDING',
      );

      const batchIds = [rejected.request.batch_id!, expired.request.batch_id!];
      const broadcastId = withdrawn.request.broadcast_id!;
      for (const id of batchIds) {
        expect(await batchRow(id)).toBeUndefined();
        expect(await commandsOf('batch_id', id)).toEqual([]);
      }
      expect(await broadcastRow(broadcastId)).toBeUndefined();
      expect(await commandsOf('broadcast_id', broadcastId)).toEqual([]);
      expect(await auditOf('batch_id', rejected.request.batch_id!)).toEqual([
        'APPROVAL_REQUESTED:alice',
        'APPROVAL_APPROVED:bob',
        'APPROVAL_REJECTED:carol',
      ]);
      expect(await auditOf('broadcast_id', broadcastId)).toEqual([
        'APPROVAL_REQUESTED:alice',
        'APPROVAL_REJECTED:alice',
      ]);
      expect(await auditOf('batch_id', expired.request.batch_id!)).toEqual([
        'APPROVAL_REQUESTED:alice',
        'APPROVAL_APPROVED:bob',
        'APPROVAL_EXPIRED:system',
      ]);
      const outcome = async (approval: Approval) =>
        (await eventsOf(approval.approval_id))
          .filter((e) => e.type === 'approval.decided')
          .map((e) => [e.data.decision, e.data.details]);
      expect(await outcome(rejected)).toEqual([
        ['REJECTED', expect.objectContaining({ batch_id: rejected.request.batch_id })],
      ]);
      expect(await outcome(expired)).toEqual([['EXPIRED', { batch_id: expired.request.batch_id }]]);
    });

    it('holds a template application to a batch target, and creates that batch once approved', async () => {
      const template = await post('alice', '/api/v1/command-templates', {
        name: 'check-and-reboot',
        variables: { reason: { type: 'string', required: true } },
        commands: [
          { command_type: 'DIAGNOSTIC', payload: { upload_logs: true } },
          { command_type: 'REBOOT', payload: { reason: 'after {{ reason }}' } },
        ],
      });
      expect(template.status, await template.clone().text()).toBe(201);
      const templateId = (await json<{ template_id: string }>(template)).template_id;
      const held = await heldBy(
        await post('alice', `/api/v1/command-templates/${templateId}/apply`, {
          variables: { reason: 'patch' },
          target: { kind: 'batch', device_ids: DEVICES, execution_mode: 'SEQUENTIAL' },
        }),
      );
      expect(held.request).toMatchObject({
        kind: 'command_batch',
        name: 'check-and-reboot v1',
        execution_mode: 'SEQUENTIAL',
        device_ids: DEVICES,
        commands: [
          { command_type: 'DIAGNOSTIC', payload: { upload_logs: true }, risk_level: 'LOW' },
          { command_type: 'REBOOT', payload: { reason: 'after patch' }, risk_level: 'HIGH' },
        ],
        risk_level: 'HIGH',
      });
      const batchId = held.request.batch_id!;
      expect(await batchRow(batchId)).toBeUndefined();
      expect(await commandsOf('batch_id', batchId)).toEqual([]);
      const applied = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['actor', 'details'])
        .where('event_type', '=', 'TEMPLATE_APPLIED')
        .where('batch_id', '=', batchId)
        .executeTakeFirstOrThrow();
      expect(applied).toMatchObject({
        actor: 'alice',
        details: { held: true, approval_id: held.approval_id, target: 'batch' },
      });

      await decided('bob', held.approval_id, 'approve');
      await decided('carol', held.approval_id, 'approve');
      expect(await batchRow(batchId)).toMatchObject({
        status: 'IN_PROGRESS',
        created_by: 'alice',
        execution_mode: 'SEQUENTIAL',
        total_commands: 4,
      });
      // SEQUENTIAL: each device's first command goes first
      const commands = await commandsOf('batch_id', batchId);
      expect(commands.map((c) => [c.device_id, c.command_type])).toEqual([
        ['fa-1', 'DIAGNOSTIC'],
        ['fa-2', 'DIAGNOSTIC'],
      ]);
      expect(await nextPushed()).toMatchObject({
        command_id: commands[0]!.command_id,
        command_type: 'DIAGNOSTIC',
      });
    });

    it('holds each run of a schedule in its creator’s name and records the approval on the run', async () => {
      // creating it still needs the roles policies require
      expect((await post('dave', '/api/v1/roles', { role_name: 'sync_operator' })).status).toBe(
        201,
      );
      const needsRole = await post('dave', '/api/v1/authorization-policies', {
        name: 'sync-needs-role',
        command_type: 'SYNC_TRANSACTIONS',
        required_role: 'sync_operator',
      });
      expect(needsRole.status).toBe(201);
      const runAt = new Date(clock.now().getTime() + 60_000).toISOString();
      const refused = await post('alice', '/api/v1/command-schedules', {
        name: 'nightly sync',
        schedule_type: 'ONCE',
        run_at: runAt,
        target: {
          kind: 'COMMAND',
          device_ids: DEVICES,
          command: { command_type: 'SYNC_TRANSACTIONS', payload: {} },
        },
      });
      expect(await code(refused, 403)).toBe('ROLE_REQUIRED');

      const created = await post('alice', '/api/v1/command-schedules', {
        name: 'nightly reboot',
        schedule_type: 'ONCE',
        run_at: runAt,
        target: { kind: 'COMMAND', device_ids: DEVICES, command: REBOOT },
      });
      expect(created.status, await created.clone().text()).toBe(201);
      const scheduleId = (await json<{ schedule_id: string }>(created)).schedule_id;
      clock.advance(61_000);
      expect((await fleet.tick()).schedules).toMatchObject({ fired: 1, failed: 0 });
      const executions = (
        await json<{ executions: Execution[] }>(
          await get(`/api/v1/command-schedules/${scheduleId}/executions`),
        )
      ).executions;
      expect(executions).toEqual([
        expect.objectContaining({
          status: 'SUCCEEDED',
          result: {
            held: true,
            approval_id: expect.any(String) as unknown,
            batch_id: expect.any(String) as unknown,
            missed_ticks: 0,
          },
        }),
      ]);
      const { approval_id: approvalId, batch_id: batchId } = executions[0]!.result as {
        approval_id: string;
        batch_id: string;
      };
      const approval = await json<Approval>(await get(`/api/v1/approvals/${approvalId}`));
      expect(approval).toMatchObject({
        status: 'PENDING',
        requested_by: 'alice',
        required_approvals: 2,
        request: {
          kind: 'command_batch',
          batch_id: batchId,
          name: 'schedule nightly reboot',
          device_ids: DEVICES,
          requested_role: 'system',
          schedule: { schedule_id: scheduleId, name: 'nightly reboot' },
        },
      });
      expect(await batchRow(batchId)).toBeUndefined();
      expect(await commandsOf('batch_id', batchId)).toEqual([]);

      // the creator cannot approve its own schedule's run
      expect(await code(await decide('alice', approvalId, 'approve'), 403)).toBe(
        'SELF_APPROVAL_FORBIDDEN',
      );
      await decided('bob', approvalId, 'approve');
      const granted = await decided('carol', approvalId, 'approve');
      expect(granted.approval).toMatchObject({ status: 'EXECUTED', result: { batch_id: batchId } });
      // created as the run would have created it: by the schedule
      expect(await batchRow(batchId)).toMatchObject({
        status: 'IN_PROGRESS',
        created_by: 'schedule:nightly reboot',
      });
      const commands = await commandsOf('batch_id', batchId);
      expect(commands.map((c) => [c.device_id, c.command_type, c.created_by])).toEqual([
        ['fa-1', 'REBOOT', 'schedule:nightly reboot'],
        ['fa-2', 'REBOOT', 'schedule:nightly reboot'],
      ]);
      expect((await nextPushed()).command_id).toBe(commands[0]!.command_id);
      expect(await auditOf('batch_id', batchId)).toEqual([
        'APPROVAL_REQUESTED:schedule:nightly reboot',
        'SCHEDULE_FIRED:schedule:nightly reboot',
        'APPROVAL_APPROVED:bob',
        'APPROVAL_APPROVED:carol',
        'BATCH_CREATED:schedule:nightly reboot',
        'APPROVAL_GRANTED:carol',
      ]);
      // a one-time schedule fires once
      expect((await fleet.tick()).schedules).toMatchObject({ fired: 0 });
    });

    it('needs an approver role for every command type of a held batch', async () => {
      expect((await post('dave', '/api/v1/roles', { role_name: 'config_approver' })).status).toBe(
        201,
      );
      const policy = await post('dave', '/api/v1/authorization-policies', {
        name: 'config-one-approver',
        command_type: 'UPDATE_CONFIG',
        requires_approval: true,
        min_approvals: 1,
        approver_roles: ['config_approver'],
      });
      expect(policy.status, await policy.clone().text()).toBe(201);
      for (const [who, scope] of [
        ['erin', { command_types: ['UPDATE_CONFIG'] }],
        ['frank', undefined],
      ] as const) {
        const assigned = await post('dave', '/api/v1/role-assignments', {
          principal_type: 'user',
          principal_id: who,
          role_name: 'config_approver',
          ...(scope ? { scope } : {}),
        });
        expect(assigned.status, await assigned.clone().text()).toBe(201);
      }
      const held = await heldBy(
        await post('alice', '/api/v1/command-batches', {
          device_ids: ['fa-2'],
          commands: [
            { command_type: 'UPDATE_CONFIG', payload: { force: true } },
            { command_type: 'DIAGNOSTIC', payload: {} },
          ],
        }),
      );
      expect(held.request).toMatchObject({ approver_roles: ['config_approver'] });
      // erin may approve UPDATE_CONFIG only; the batch also holds a DIAGNOSTIC
      expect(await code(await decide('erin', held.approval_id, 'approve'), 403)).toBe(
        'NOT_AN_APPROVER',
      );
      expect(await code(await decide('bob', held.approval_id, 'approve'), 403)).toBe(
        'NOT_AN_APPROVER',
      );
      const granted = await decided('frank', held.approval_id, 'approve');
      expect(granted.approval.status).toBe('EXECUTED');
      const commands = await commandsOf('batch_id', held.request.batch_id!);
      expect(commands.map((c) => c.command_type).sort()).toEqual(['DIAGNOSTIC', 'UPDATE_CONFIG']);
    });
  });
}
