/**
 * Webhooks over real HTTP, with receivers that are real local HTTP servers: registration is
 * admin only and shows the signing secret once (never in lists, reads or audit rows); a
 * receiver that is down for a while gets every event exactly once and in order once it is
 * back (head-of-line: later events wait behind the failing one); two gateways dispatching
 * one database still deliver each event once, in order; signatures verify and fail on a
 * changed body; a delivery that keeps failing is dead-lettered with its retry history and
 * redelivered by hand; and each fact — device online/offline, command executed/failed, SAF
 * upload, workflow completed/failed, config published — emits its event.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGateway,
  verifyWebhookSignature,
  WEBHOOK_HEADERS,
  type Gateway,
} from '../../gateway/index.js';
import { commandRoutes } from '../../gateway/routes/commands.js';
import { registerConfigRoutes } from '../../gateway/config/routes.js';
import { registerTransactionRoutes } from '../../gateway/routes/transactions.js';
import { webhookRoutes } from '../../gateway/webhooks/module.js';
import { registerWorkflowRoutes } from '../../gateway/routes/workflows.js';
import { connectDevice, signedRecord } from '../support/device.js';
import { ENGINE_STEPS } from '../support/engine.js';
import { QUIET_LINK } from '../support/fleet.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';
import {
  startWebhookReceiver,
  type ReceivedRequest,
  type WebhookReceiver,
} from '../support/webhookReceiver.js';

type Json = Record<string, unknown>;
interface Delivery extends Json {
  delivery_id: string;
  event_id: string;
  event_type: string;
  sequence: number;
  status: string;
  attempt_count: number;
  attempts: {
    attempt: number;
    status_code: number | null;
    error: string | null;
    outcome: string;
  }[];
}

/** Fast retries, so a test waits milliseconds for what takes minutes in production. */
const FAST = { pollIntervalMs: 10, backoff: { baseMs: 20, maxMs: 200 }, timeoutMs: 5_000 };

const COMPLETES = `
workflow_type: hook_completes
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.mark }
`;
const FAILS = `
workflow_type: hook_fails
automate_next: true
steps:
  - { name: boom, type: STANDARD, function: steps.always_fail }
`;

/** Poll `check` until it holds (a condition, not a timer: the test's timeout bounds it). */
async function eventually<T>(check: () => Promise<T | undefined | false>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const eventIds = (received: readonly ReceivedRequest[]) => received.map((r) => r.json.id);
const sequences = (received: readonly ReceivedRequest[]) =>
  received.map((r) => Number(r.headers[WEBHOOK_HEADERS.sequence]));

for (const dialect of CLOUD_DIALECTS) {
  describe(`webhooks on ${dialect.name}`, () => {
    let gw: TestGateway;
    let operator: string;
    let viewer: string;
    const receivers: WebhookReceiver[] = [];

    const asAdmin = (path: string, init: RequestInit = {}) => gw.asUser(gw.adminToken, path, init);
    const register = async (url: string, body: Json) => {
      const res = await asAdmin('/api/v1/webhooks', {
        method: 'POST',
        body: JSON.stringify({ url, ...body }),
      });
      expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
      return (await res.json()) as Json & { webhook_id: string; secret: string };
    };
    const deliveries = async (webhookId: string, query = 'limit=500') => {
      const res = await asAdmin(`/api/v1/webhooks/${webhookId}/deliveries?${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
    };
    const publish = async (key: string, config: Json) => {
      // as an admin: an operator's configuration push waits for approval
      const res = await gw.asUser(gw.adminToken, `/api/v1/config/device_type/${key}`, {
        method: 'PUT',
        body: JSON.stringify(config),
      });
      expect(res.status).toBe(200);
    };
    const receiver = async () => {
      const r = await startWebhookReceiver();
      receivers.push(r);
      return r;
    };

    beforeAll(async () => {
      gw = await startTestGateway(dialect, {
        stepsRoot: ENGINE_STEPS,
        routes: [
          registerWorkflowRoutes,
          registerConfigRoutes,
          registerTransactionRoutes,
          commandRoutes(QUIET_LINK),
          webhookRoutes(FAST),
        ],
      });
      operator = await gw.token('operator');
      viewer = await gw.token('viewer');
    });
    afterAll(async () => {
      await gw.close();
      for (const r of receivers) await r.stop().catch(() => undefined);
    });

    it('registers webhooks as admin only and shows the signing secret once, nowhere else', async () => {
      const url = 'https://hooks.example.test/saffron?token=abc';
      for (const token of [operator, viewer]) {
        const res = await gw.asUser(token, '/api/v1/webhooks', {
          method: 'POST',
          body: JSON.stringify({ url, event_types: ['config.published'] }),
        });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { code: string }).code).toBe('FORBIDDEN');
      }
      expect((await gw.asUser(operator, '/api/v1/webhooks')).status).toBe(403);

      const created = await register(url, {
        name: 'ops',
        event_types: ['config.published', 'device.online'],
        active: false,
      });
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(created).toMatchObject({ name: 'ops', url, active: false, max_retries: 10 });

      const listed = await (await asAdmin('/api/v1/webhooks')).text();
      const read = await (await asAdmin(`/api/v1/webhooks/${created.webhook_id}`)).text();
      for (const text of [listed, read]) {
        expect(text).toContain(created.webhook_id);
        expect(text).not.toContain(created.secret);
        expect(text).not.toContain('secret');
      }
      expect(JSON.parse(read)).toMatchObject({
        event_types: ['config.published', 'device.online'],
        deliveries: { PENDING: 0, DELIVERED: 0, FAILED: 0, DEAD: 0 },
      });

      const rotated = (await (
        await asAdmin(`/api/v1/webhooks/${created.webhook_id}/rotate-secret`, { method: 'POST' })
      ).json()) as { secret: string };
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(created.secret);

      // stored sealed; audit rows name the change with the URL's origin and path only
      const row = await gw.handle.store.cloud
        .selectFrom('webhook_registrations')
        .select('secret_ciphertext')
        .where('webhook_id', '=', created.webhook_id)
        .executeTakeFirstOrThrow();
      expect(row.secret_ciphertext).not.toContain(rotated.secret);
      expect(gw.keys.open(row.secret_ciphertext)).toBe(rotated.secret);
      const audit = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type', 'details', 'actor'])
        .where('event_type', 'like', 'WEBHOOK_%')
        .orderBy('id')
        .execute();
      expect(audit.map((a) => a.event_type)).toEqual(['WEBHOOK_CREATED', 'WEBHOOK_SECRET_ROTATED']);
      const auditText = JSON.stringify(audit);
      expect(auditText).not.toContain(created.secret);
      expect(auditText).not.toContain(rotated.secret);
      expect(auditText).not.toContain('token=abc');
      expect(auditText).toContain('https://hooks.example.test/saffron');

      const bad = async (body: Json) =>
        (await asAdmin('/api/v1/webhooks', { method: 'POST', body: JSON.stringify(body) })).status;
      expect(await bad({ url: 'ftp://x.test/h', event_types: ['config.published'] })).toBe(422);
      expect(await bad({ url: 'https://u:p@x.test/h', event_types: ['config.published'] })).toBe(
        422,
      );
      expect(await bad({ url: 'https://x.test/h', event_types: ['config.publish'] })).toBe(422);
      expect(await bad({ url: 'https://x.test/h', event_types: [] })).toBe(422);

      const patched = await asAdmin(`/api/v1/webhooks/${created.webhook_id}`, {
        method: 'PATCH',
        body: JSON.stringify({ active: true, max_retries: 3 }),
      });
      expect(await patched.json()).toMatchObject({ active: true, max_retries: 3 });
      expect(
        (await asAdmin(`/api/v1/webhooks/${created.webhook_id}`, { method: 'DELETE' })).status,
      ).toBe(204);
      expect((await asAdmin(`/api/v1/webhooks/${created.webhook_id}`)).status).toBe(404);
      const types = await (await gw.asUser(viewer, '/api/v1/webhooks/event-types')).json();
      expect((types as { event_types: string[] }).event_types).toContain('approval.decided');
    });

    it('delivers every event exactly once and in order to a receiver that was down for a while', async () => {
      const r = await receiver();
      const hook = await register(r.url, { event_types: ['config.published'], max_retries: 25 });
      await r.stop();
      for (let i = 1; i <= 6; i++) await publish('outage', { step: i });

      // the oldest event is retried; the later ones wait behind it, never attempted
      const held = await eventually(async () => {
        const all = await deliveries(hook.webhook_id);
        const head = all.find((d) => d.sequence === 1);
        return head && head.attempts.length >= 3 ? all : undefined;
      });
      expect(held).toHaveLength(6);
      for (const d of held.filter((d) => d.sequence > 1)) expect(d.attempt_count).toBe(0);
      expect(held.find((d) => d.sequence === 1)!.attempts[0]).toMatchObject({
        attempt: 1,
        status_code: null,
        outcome: 'FAILED',
      });
      expect(r.received).toHaveLength(0);

      await r.start();
      await eventually(async () => {
        const all = await deliveries(hook.webhook_id);
        return all.every((d) => d.status === 'DELIVERED') ? all : undefined;
      });
      // exactly once each, in order
      expect(r.received).toHaveLength(6);
      expect(new Set(eventIds(r.received)).size).toBe(6);
      expect(sequences(r.received)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(r.received.map((q) => q.json.data.version)).toEqual([1, 2, 3, 4, 5, 6]);
      for (const q of r.received) {
        expect(q.json.type).toBe('config.published');
        expect(q.headers[WEBHOOK_HEADERS.eventType]).toBe('config.published');
        expect(q.headers[WEBHOOK_HEADERS.eventId]).toBe(q.json.id);
        expect(q.headers[WEBHOOK_HEADERS.webhookId]).toBe(hook.webhook_id);
        expect(q.json.data).toMatchObject({ scope: 'device_type', scope_key: 'outage' });
        expect(
          verifyWebhookSignature({
            secret: hook.secret,
            body: q.body,
            timestamp: q.headers[WEBHOOK_HEADERS.timestamp] as string,
            signature: q.headers[WEBHOOK_HEADERS.signature] as string,
          }),
        ).toBe(true);
      }
      // a changed body, another secret or a stale timestamp does not verify
      const first = r.received[0]!;
      const check = {
        secret: hook.secret,
        body: first.body,
        timestamp: first.headers[WEBHOOK_HEADERS.timestamp] as string,
        signature: first.headers[WEBHOOK_HEADERS.signature] as string,
      };
      expect(
        verifyWebhookSignature({ ...check, body: first.body.replace('outage', 'outagE') }),
      ).toBe(false);
      expect(verifyWebhookSignature({ ...check, secret: 'whsec_other' })).toBe(false);
      expect(verifyWebhookSignature({ ...check, now: new Date(Date.now() + 3_600_000) })).toBe(
        false,
      );
      // the head's history: refused connections, then the delivery
      const head = (await deliveries(hook.webhook_id)).find((d) => d.sequence === 1)!;
      expect(head.attempts.at(-1)).toMatchObject({ status_code: 204, outcome: 'DELIVERED' });
      expect(head.attempts.slice(0, -1).every((a) => a.outcome === 'FAILED')).toBe(true);
      expect(head.attempts.map((a) => a.attempt)).toEqual(head.attempts.map((_, i) => i + 1));
      // filters and keyset pages: newest first, two at a time
      const page = async (query: string) =>
        (await (
          await asAdmin(`/api/v1/webhooks/${hook.webhook_id}/deliveries?${query}`)
        ).json()) as {
          deliveries: Delivery[];
          next_cursor: string | null;
        };
      const one = await page('status=DELIVERED&event_type=config.published&limit=2');
      expect(one.deliveries.map((d) => d.sequence)).toEqual([6, 5]);
      const two = await page(`status=DELIVERED&limit=2&cursor=${one.next_cursor}`);
      expect(two.deliveries.map((d) => d.sequence)).toEqual([4, 3]);
      expect((await page('status=FAILED')).deliveries).toEqual([]);
      const byEvent = await page(`event_id=${r.received[2]!.json.id}`);
      expect(byEvent.deliveries.map((d) => d.sequence)).toEqual([3]);
      expect(
        (await asAdmin(`/api/v1/webhooks/${hook.webhook_id}/deliveries?cursor=bm9wZQ`)).status,
      ).toBe(400);
      await asAdmin(`/api/v1/webhooks/${hook.webhook_id}`, { method: 'DELETE' });
    });

    it('delivers each event once and in order while two gateways dispatch the same database', async () => {
      let second: Gateway | undefined;
      try {
        second = await createGateway({
          store: gw.handle.store,
          keys: gw.keys,
          routes: [webhookRoutes(FAST)],
          outbound: { allowedPrivateNetworks: ['loopback'] },
        });
        const r = await receiver();
        const hook = await register(r.url, { event_types: ['config.published'] });
        for (let i = 1; i <= 20; i++) await publish('pair', { n: i });
        await r.until((received) => new Set(eventIds(received)).size >= 20);
        await eventually(async () =>
          (await deliveries(hook.webhook_id)).every((d) => d.status === 'DELIVERED'),
        );
        expect(r.received).toHaveLength(20);
        expect(sequences(r.received)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        await asAdmin(`/api/v1/webhooks/${hook.webhook_id}`, { method: 'DELETE' });
      } finally {
        await second?.close();
      }
    });

    it('dead-letters a delivery after its retries, lets later events through, and redelivers it by hand', async () => {
      const deviceId = `pos-dead-${dialect.name}`;
      const secret = await gw.insertDevice(deviceId);
      const r = await receiver();
      r.status = 500;
      const hook = await register(r.url, {
        event_types: ['command.executed', 'command.failed'],
        max_retries: 2,
      });
      const send = async () => {
        const res = await gw.asUser(operator, `/api/v1/devices/${deviceId}/commands`, {
          method: 'POST',
          body: JSON.stringify({ command_type: 'DIAGNOSTIC', payload: {} }),
        });
        expect(res.status, await res.clone().text()).toBe(201);
        return ((await res.json()) as { command_id: string }).command_id;
      };
      const ack = async (commandId: string, body: Json) => {
        const res = await gw.asDevice(
          deviceId,
          secret,
          `/api/v1/devices/${deviceId}/commands/${commandId}/ack`,
          { method: 'POST', body: JSON.stringify(body) },
        );
        expect(res.status).toBe(200);
      };
      const executed = await send();
      await ack(executed, { status: 'EXECUTED', result: { ok: true } });

      const dead = await eventually(async () =>
        (await deliveries(hook.webhook_id)).find((d) => d.status === 'DEAD'),
      );
      expect(dead).toMatchObject({ event_type: 'command.executed', attempt_count: 3 });
      expect(dead.attempts.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
        [1, 500, 'FAILED'],
        [2, 500, 'FAILED'],
        [3, 500, 'DEAD'],
      ]);
      expect(r.received).toHaveLength(3);
      expect(new Set(eventIds(r.received))).toEqual(new Set([dead.event_id]));
      expect(r.received.map((q) => q.headers[WEBHOOK_HEADERS.attempt])).toEqual(['1', '2', '3']);
      expect(r.received[0]!.json.data).toMatchObject({
        command_id: executed,
        device_id: deviceId,
        command_type: 'DIAGNOSTIC',
        status: 'EXECUTED',
        audit_event: 'COMMAND_EXECUTED',
      });
      const deadAudit = await gw.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['actor', 'details'])
        .where('event_type', '=', 'WEBHOOK_DELIVERY_DEAD')
        .execute();
      expect(deadAudit).toHaveLength(1);
      expect(JSON.stringify(deadAudit[0]!.details)).toContain(dead.delivery_id);

      // the dead one no longer holds the registration back
      r.status = 200;
      const failed = await send();
      await ack(failed, { status: 'FAILED', error: 'printer jammed' });
      await r.until((received) => received.some((q) => q.json.type === 'command.failed'));
      const failedEvent = r.received.find((q) => q.json.type === 'command.failed')!;
      expect(failedEvent.json.data).toMatchObject({
        command_id: failed,
        status: 'FAILED',
        error: 'printer jammed',
      });

      const redeliver = (id: string, token: string) =>
        gw.asUser(token, `/api/v1/webhooks/${hook.webhook_id}/deliveries/${id}/redeliver`, {
          method: 'POST',
        });
      expect((await redeliver(dead.delivery_id, operator)).status).toBe(403);
      const again = await redeliver(dead.delivery_id, gw.adminToken);
      expect(again.status).toBe(202);
      expect(await again.json()).toMatchObject({ status: 'PENDING', attempt_count: 0 });
      await r.until((received) => received.filter((q) => q.json.id === dead.event_id).length === 4);
      const redelivered = await eventually(async () => {
        const res = await asAdmin(
          `/api/v1/webhooks/${hook.webhook_id}/deliveries/${dead.delivery_id}`,
        );
        const d = (await res.json()) as Delivery;
        return d.status === 'DELIVERED' ? d : undefined;
      });
      expect(redelivered.attempts.map((a) => a.outcome)).toEqual([
        'FAILED',
        'FAILED',
        'DEAD',
        'DELIVERED',
      ]);
      const conflict = await redeliver(dead.delivery_id, gw.adminToken);
      expect(conflict.status).toBe(409);
      expect(((await conflict.json()) as { code: string }).code).toBe('DELIVERY_NOT_REDELIVERABLE');
      expect((await redeliver(randomUUID(), gw.adminToken)).status).toBe(404);
      await asAdmin(`/api/v1/webhooks/${hook.webhook_id}`, { method: 'DELETE' });
    });

    it('emits device, SAF, workflow and config events from the facts, once each', async () => {
      const deviceId = `pos-facts-${dialect.name}`;
      const secret = await gw.insertDevice(deviceId);
      const r = await receiver();
      const hook = await register(r.url, {
        event_types: [
          'device.online',
          'device.offline',
          'saf.batch_synced',
          'workflow.completed',
          'workflow.failed',
        ],
      });
      const kinds = () => r.received.map((q) => q.json.type);

      const socket = await connectDevice(gw.url, deviceId, secret);
      socket.send({ type: 'hello' });
      await socket.next('welcome');
      await r.until((received) => received.some((q) => q.json.type === 'device.online'));
      await socket.close();
      await r.until((received) => received.some((q) => q.json.type === 'device.offline'));

      const record = signedRecord(deviceId, secret, { device_sequence: 1 });
      const upload = () =>
        gw.asDevice(deviceId, secret, '/api/v1/transactions/batch', {
          method: 'POST',
          body: JSON.stringify({ records: [record] }),
        });
      expect((await upload()).status).toBe(200);
      expect((await upload()).status).toBe(200); // a retried upload stores nothing new
      await r.until((received) => received.some((q) => q.json.type === 'saf.batch_synced'));

      for (const yaml of [COMPLETES, FAILS])
        expect(
          (
            await asAdmin('/api/v1/workflow-definitions', {
              method: 'POST',
              body: JSON.stringify({ yaml }),
            })
          ).status,
        ).toBe(201);
      const start = async (type: string) =>
        (
          (await (
            await gw.asUser(operator, '/api/v1/workflows', {
              method: 'POST',
              body: JSON.stringify({ workflow_type: type }),
            })
          ).json()) as { id: string }
        ).id;
      const completed = await start('hook_completes');
      const failed = await start('hook_fails');
      await r.until((received) => received.length >= 5);
      // config.published is not subscribed: nothing arrives for it
      await publish('unsubscribed', { a: 1 });
      await eventually(async () =>
        (await deliveries(hook.webhook_id)).every((d) => d.status === 'DELIVERED'),
      );

      expect(kinds()).toEqual([
        'device.online',
        'device.offline',
        'saf.batch_synced',
        'workflow.completed',
        'workflow.failed',
      ]);
      const data = (kind: string) => r.received.find((q) => q.json.type === kind)!.json.data;
      expect(data('device.online')).toEqual({
        device_id: deviceId,
        status: 'ONLINE',
        reason: 'connected',
      });
      expect(data('device.offline')).toEqual({
        device_id: deviceId,
        status: 'OFFLINE',
        reason: 'disconnected',
      });
      expect(data('saf.batch_synced')).toMatchObject({
        device_id: deviceId,
        stored: 1,
        duplicates: 0,
        workflow_ids: [record.workflow_id],
        last_sequence_number: 1,
      });
      expect(data('workflow.completed')).toMatchObject({
        workflow_id: completed,
        workflow_type: 'hook_completes',
        status: 'COMPLETED',
      });
      expect(data('workflow.failed')).toMatchObject({ workflow_id: failed, status: 'FAILED' });
      expect(sequences(r.received)).toEqual([1, 2, 3, 4, 5]);
      expect(JSON.stringify(r.received.map((q) => q.json))).not.toContain(secret);
      await asAdmin(`/api/v1/webhooks/${hook.webhook_id}`, { method: 'DELETE' });
    });
  });
}
