/**
 * Rate limits across two gateways sharing one database (on PostgreSQL each with its own
 * connection pool, as two processes would have): per API token, per device and per
 * operator name, over endpoint patterns; never more admitted than the limit in a window
 * however the requests are spread and raced across the gateways; 429 problem+json with
 * Retry-After, and RateLimit-* headers on what is admitted (device socket upgrades too);
 * most requests spend a locally reserved slice instead of writing; a new window admits
 * again; rule changes are audited.
 */
import { mkdtempSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Counter } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createApiToken,
  createGateway,
  deviceAuthHeaders,
  type Gateway,
} from '../../gateway/index.js';
import { openStore, asCloud, type CloudStore } from '../../runtime/index.js';
import { refusedUpgrade, socketHeaders, testClock } from '../support/device.js';
import { json } from '../support/fleet.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

type Json = Record<string, unknown>;

for (const dialect of CLOUD_DIALECTS) {
  describe(`rate limits across two gateways on ${dialect.name}`, () => {
    const clock = testClock();
    let a: TestGateway;
    let b: Gateway;
    let bUrl: string;
    let bStore: CloudStore | undefined;
    const secrets: Record<string, string> = {};

    const urls = () => [a.url, bUrl];
    const asUser = (base: string, token: string, path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, {
        ...init,
        headers: {
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
          authorization: `Bearer ${token}`,
        },
      });
    const asDevice = (base: string, deviceId: string, path: string) =>
      fetch(`${base}${path}`, {
        headers: deviceAuthHeaders(deviceId, secrets[deviceId]!, {
          method: 'GET',
          pathWithQuery: path,
          body: '',
          timestamp: clock.now().toISOString(),
        }),
      });
    const createRule = async (body: Json) => {
      const res = await asUser(a.url, a.adminToken, '/api/v1/rate-limits', {
        method: 'POST',
        body: JSON.stringify(body),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      // the other gateway reads rules again after its refresh interval; do not wait for it
      b.context.rateLimits.invalidate();
      return json<{ rule_id: string }>(res);
    };
    const operator = async (name: string) =>
      (await createApiToken(a.handle.store, { name, role: 'operator' })).token;
    const reservations = async (g: Gateway) => {
      const metric = g.context.metrics.getSingleMetric(
        'saffron_rate_limit_reservations_total',
      ) as Counter;
      return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
    };

    beforeAll(async () => {
      a = await startTestGateway(dialect, { now: clock.now });
      // the second gateway: on PostgreSQL a store of its own on the same schema
      bStore =
        dialect.name === 'postgres'
          ? asCloud(
              await openStore(process.env.DATABASE_URL!, {
                postgres: { schema: a.handle.location, maxConnections: 4 },
              }),
            )
          : undefined;
      b = await createGateway({
        store: bStore ?? a.handle.store,
        keys: a.keys,
        now: clock.now,
        wasmStorageDir: mkdtempSync(join(tmpdir(), 'saffron-wasm-')),
      });
      bUrl = await b.listen(0);
      for (const id of ['rl-dev-1', 'rl-dev-2']) secrets[id] = await a.insertDevice(id);
    });
    afterAll(async () => {
      await b.close();
      await bStore?.close();
      await a.close();
    });

    it('lets only admins manage rules, and refuses patterns that match no route', async () => {
      const body = {
        name: 'nope',
        scope: 'api_key',
        route_pattern: 'GET /api/v1/devices/:id',
        max_requests: 5,
        window_seconds: 60,
      };
      const op = await operator('rl-op-0');
      const forbidden = await asUser(a.url, op, '/api/v1/rate-limits', {
        method: 'POST',
        body: JSON.stringify(body),
      });
      expect(forbidden.status).toBe(403);
      const typo = await asUser(a.url, a.adminToken, '/api/v1/rate-limits', {
        method: 'POST',
        body: JSON.stringify({ ...body, route_pattern: 'GET /api/v1/devcies/:id' }),
      });
      expect(typo.status).toBe(422);
      expect(await json(typo)).toMatchObject({ code: 'UNKNOWN_ROUTE_PATTERN' });
      const malformed = await asUser(a.url, a.adminToken, '/api/v1/rate-limits', {
        method: 'POST',
        body: JSON.stringify({ ...body, route_pattern: 'FETCH everything' }),
      });
      expect(malformed.status).toBe(422);
      expect(
        await a.handle.store.cloud.selectFrom('rate_limit_rules').selectAll().execute(),
      ).toEqual([]);
    });

    it('holds a per-token limit across both gateways, with headers and Retry-After', async () => {
      const rule = await createRule({
        name: 'device-reads-per-token',
        scope: 'api_key',
        route_pattern: 'GET /api/v1/devices/:id',
        max_requests: 10,
        window_seconds: 60,
      });
      const token = await operator('rl-op-1');
      const statuses: number[] = [];
      const remaining: (string | null)[] = [];
      for (let i = 0; i < 14; i++) {
        const res = await asUser(urls()[i % 2]!, token, '/api/v1/devices/rl-dev-1');
        statuses.push(res.status);
        if (res.status === 200) {
          expect(res.headers.get('ratelimit-limit')).toBe('10');
          remaining.push(res.headers.get('ratelimit-remaining'));
          const reset = Number(res.headers.get('ratelimit-reset'));
          expect(reset).toBeGreaterThanOrEqual(1);
          expect(reset).toBeLessThanOrEqual(60);
        } else {
          expect(res.headers.get('content-type')).toContain('application/problem+json');
          const retry = Number(res.headers.get('retry-after'));
          expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
          expect(res.headers.get('ratelimit-remaining')).toBe('0');
          expect(await json(res)).toMatchObject({
            status: 429,
            code: 'RATE_LIMITED',
            rule: 'device-reads-per-token',
            limit: 10,
          });
        }
      }
      expect(statuses).toEqual([...Array<number>(10).fill(200), 429, 429, 429, 429]);
      expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
      // the shared counter shows the token's use of this window (refusals are not counted)
      const usage = await json<{ usage: { subjects: { subject: string; count: number }[] } }>(
        await asUser(bUrl, a.adminToken, `/api/v1/rate-limits/${rule.rule_id}`),
      );
      expect(usage.usage.subjects.map((u) => u.count)).toEqual([10]);
      expect(usage.usage.subjects[0]!.subject).toMatch(/^token:/);

      // another token has its own budget; other routes are not covered
      const other = await operator('rl-op-2');
      expect((await asUser(bUrl, other, '/api/v1/devices/rl-dev-1')).status).toBe(200);
      const list = await asUser(a.url, token, '/api/v1/devices');
      expect(list.status).toBe(200);
      expect(list.headers.get('ratelimit-limit')).toBeNull();

      // the next window admits again
      clock.advance(60_000);
      expect((await asUser(bUrl, token, '/api/v1/devices/rl-dev-1')).status).toBe(200);
    });

    it('admits exactly the limit when both gateways are raced at once', async () => {
      const token = await operator('rl-op-3');
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          asUser(urls()[i % 2]!, token, '/api/v1/devices/rl-dev-2').then(async (res) => {
            await res.arrayBuffer();
            return res.status;
          }),
        ),
      );
      expect(results.filter((s) => s === 200)).toHaveLength(10);
      expect(results.filter((s) => s === 429)).toHaveLength(30);
    });

    it('holds a per-device limit on signed device requests', async () => {
      await createRule({
        name: 'polls-per-device',
        scope: 'device',
        route_pattern: 'GET /api/v1/devices/:id/commands',
        max_requests: 3,
        window_seconds: 30,
      });
      const polls: number[] = [];
      for (let i = 0; i < 5; i++)
        polls.push(
          (await asDevice(urls()[i % 2]!, 'rl-dev-1', '/api/v1/devices/rl-dev-1/commands')).status,
        );
      expect(polls).toEqual([200, 200, 200, 429, 429]);
      // another device, and the same device on other routes, are not limited by it
      expect((await asDevice(bUrl, 'rl-dev-2', '/api/v1/devices/rl-dev-2/commands')).status).toBe(
        200,
      );
      expect((await asDevice(a.url, 'rl-dev-1', '/api/v1/devices/rl-dev-1')).status).toBe(200);
    });

    it('spends locally reserved slices: exactly the limit, with far fewer writes than requests', async () => {
      await createRule({
        name: 'device-lists-per-operator',
        scope: 'user',
        route_pattern: 'GET /api/v1/devices',
        max_requests: 200,
        window_seconds: 3600,
      });
      const token = await operator('rl-op-4');
      const writesBefore = (await reservations(a.gateway)) + (await reservations(b));
      let admitted = 0;
      for (let i = 0; i < 300; i++) {
        const res = await asUser(urls()[i % 2]!, token, '/api/v1/devices?limit=1');
        await res.arrayBuffer();
        if (res.status === 200) admitted++;
        else expect(res.status).toBe(429);
      }
      expect(admitted).toBe(200);
      const writes = (await reservations(a.gateway)) + (await reservations(b)) - writesBefore;
      expect(writes).toBeGreaterThan(0);
      expect(writes).toBeLessThan(75);
      // the shared counter holds what was granted: exactly the limit
      const rows = await a.handle.store.cloud
        .selectFrom('rate_limit_tracking')
        .select(['subject_key', 'request_count'])
        .where('subject_key', '=', 'user:rl-op-4')
        .execute();
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.request_count)).toBe(200);
    });

    it('stops applying a rule deleted on the other gateway, and audits every change', async () => {
      const rule = await createRule({
        name: 'everything-per-operator',
        scope: 'user',
        route_pattern: '*',
        max_requests: 1,
        window_seconds: 60,
      });
      const token = await operator('rl-op-5');
      expect((await asUser(bUrl, token, '/api/v1/devices/rl-dev-1')).status).toBe(200);
      expect((await asUser(bUrl, token, '/api/v1/devices/rl-dev-1')).status).toBe(429);
      // disabled through gateway A, applied by B after its refresh
      const patched = await asUser(a.url, a.adminToken, `/api/v1/rate-limits/${rule.rule_id}`, {
        method: 'PATCH',
        body: JSON.stringify({ max_requests: 2 }),
      });
      expect(patched.status).toBe(200);
      b.context.rateLimits.invalidate();
      expect((await asUser(bUrl, token, '/api/v1/devices/rl-dev-1')).status).toBe(200);
      // deleted through A while B still holds the rule: B's next reservation finds it gone
      const other = await operator('rl-op-6');
      const deleted = await asUser(a.url, a.adminToken, `/api/v1/rate-limits/${rule.rule_id}`, {
        method: 'DELETE',
      });
      expect(deleted.status).toBe(204);
      for (let i = 0; i < 3; i++)
        expect((await asUser(bUrl, other, '/api/v1/devices/rl-dev-2')).status).toBe(200);

      const audit = await a.handle.store.cloud
        .selectFrom('command_audit_log')
        .select(['event_type', 'actor'])
        .where('event_type', 'like', 'RATE_LIMIT_RULE_%')
        .orderBy('id')
        .execute();
      expect(audit.map((r) => r.event_type)).toEqual([
        'RATE_LIMIT_RULE_CREATED',
        'RATE_LIMIT_RULE_CREATED',
        'RATE_LIMIT_RULE_CREATED',
        'RATE_LIMIT_RULE_CREATED',
        'RATE_LIMIT_RULE_UPDATED',
        'RATE_LIMIT_RULE_DELETED',
      ]);
      expect(new Set(audit.map((r) => r.actor))).toEqual(new Set(['test admin']));
    });

    it('caps bursts per second on top of the window, across both gateways', async () => {
      const tooBig = await asUser(a.url, a.adminToken, '/api/v1/rate-limits', {
        method: 'POST',
        body: JSON.stringify({
          name: 'bad-burst',
          scope: 'api_key',
          route_pattern: 'GET /api/v1/devices/:id',
          max_requests: 5,
          window_seconds: 60,
          burst: 6,
        }),
      });
      expect(tooBig.status).toBe(422);
      expect(await json(tooBig)).toMatchObject({
        code: 'INVALID_REQUEST',
        errors: [{ path: '$.burst' }],
      });
      const rule = await createRule({
        name: 'bursty-reads',
        scope: 'api_key',
        route_pattern: 'GET /api/v1/devices/rl-dev-1',
        max_requests: 6,
        window_seconds: 60,
        burst: 3,
      });
      expect(rule).toMatchObject({ burst: 3 });
      const token = await operator('rl-op-burst');
      const get = async (i: number) => {
        const res = await asUser(urls()[i % 2]!, token, '/api/v1/devices/rl-dev-1');
        return { status: res.status, body: res.status === 200 ? {} : await json<Json>(res) };
      };
      // start just after a minute boundary, so the whole test sits in one 60 s window
      clock.advance(60_000 - (clock.now().getTime() % 60_000) + 10);
      const first = [];
      for (let i = 0; i < 5; i++) first.push(await get(i));
      expect(first.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
      expect(first[3]!.body).toMatchObject({ code: 'RATE_LIMITED', limit: 3, burst: true });
      // the next second admits a burst again, up to the window's limit of 6
      clock.advance(1_000);
      const second = [];
      for (let i = 0; i < 3; i++) second.push(await get(i));
      expect(second.map((r) => r.status)).toEqual([200, 200, 200]);
      // a third second has burst room, but the window's 6 are spent
      clock.advance(1_000);
      const third = await get(0);
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ limit: 6, window_seconds: 60 });
      expect(third.body).not.toHaveProperty('burst');
      // removing the burst leaves the window's limit alone
      const patched = await asUser(a.url, a.adminToken, `/api/v1/rate-limits/${rule.rule_id}`, {
        method: 'PATCH',
        body: JSON.stringify({ burst: null }),
      });
      expect(await json(patched)).toMatchObject({ burst: null, max_requests: 6 });
      b.context.rateLimits.invalidate();
      clock.advance(1_000);
      expect((await get(0)).status).toBe(429);
      await asUser(a.url, a.adminToken, `/api/v1/rate-limits/${rule.rule_id}`, {
        method: 'DELETE',
      });
    });

    it('counts public routes under global rules (registration-key guessing), never the probes', async () => {
      const registrations = await createRule({
        name: 'registrations',
        scope: 'global',
        route_pattern: 'POST /api/v1/devices/register',
        max_requests: 2,
        window_seconds: 60,
      });
      const everything = await createRule({
        name: 'everything',
        scope: 'global',
        route_pattern: '*',
        max_requests: 1_000,
        window_seconds: 60,
      });
      clock.advance(60_000 - (clock.now().getTime() % 60_000) + 10);
      const register = (base: string) =>
        fetch(`${base}/api/v1/devices/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ registration_key: 'not-a-key', device_type: 'POS' }),
        });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await register(urls()[i % 2]!)).status);
      expect(statuses.slice(0, 2).every((s) => s !== 429)).toBe(true);
      expect(statuses.slice(2)).toEqual([429, 429]);
      const refused = await register(a.url);
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect(await json(refused)).toMatchObject({ code: 'RATE_LIMITED', rule: 'registrations' });
      // the probes answer whatever the global rules say
      await asUser(a.url, a.adminToken, `/api/v1/rate-limits/${everything.rule_id}`, {
        method: 'PATCH',
        body: JSON.stringify({ max_requests: 1 }),
      });
      for (let i = 0; i < 3; i++) {
        expect((await fetch(`${a.url}/healthz`)).status).toBe(200);
        expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
      }
      expect((await fetch(`${a.url}/api/v1/openapi.json`)).status).toBe(429);
      for (const rule of [registrations, everything])
        await asUser(a.url, a.adminToken, `/api/v1/rate-limits/${rule.rule_id}`, {
          method: 'DELETE',
        });
    });

    it('counts device socket upgrades: RateLimit headers on the 101, then a 429 problem', async () => {
      await createRule({
        name: 'upgrades-per-device',
        scope: 'device',
        route_pattern: 'GET /api/v1/devices/:id/ws',
        max_requests: 2,
        window_seconds: 30,
      });
      const path = '/api/v1/devices/rl-dev-2/ws';
      for (const base of urls()) {
        const ws = new WebSocket(`${base.replace(/^http/, 'ws')}${path}`, {
          headers: socketHeaders('rl-dev-2', secrets['rl-dev-2']!, path, clock.now()),
        });
        const answered = await new Promise<IncomingMessage>((resolve, reject) => {
          ws.on('upgrade', resolve);
          ws.on('unexpected-response', (_request, response) =>
            reject(new Error(`upgrade refused: ${response.statusCode}`)),
          );
        });
        expect(answered.headers['ratelimit-limit']).toBe('2');
        ws.terminate();
      }
      const refused = await refusedUpgrade(
        a.url,
        path,
        socketHeaders('rl-dev-2', secrets['rl-dev-2']!, path, clock.now()),
      );
      expect(refused).toMatchObject({
        status: 429,
        body: { code: 'RATE_LIMITED', rule: 'upgrades-per-device' },
      });
      expect(refused.headers['content-type']).toBe('application/problem+json');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });
  });
}
