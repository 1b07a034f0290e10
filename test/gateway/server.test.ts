/**
 * The server's common behaviour over real HTTP on loopback: probes, the OpenAPI document,
 * problem+json errors, operator tokens and roles, and every device-signature failure mode.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceAuthHeaders } from '../../gateway/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

for (const dialect of CLOUD_DIALECTS) {
  describe(`gateway server on ${dialect.name}`, () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway(dialect);
    });
    afterAll(async () => {
      await gw.close();
    });

    it('answers the probes and serves an OpenAPI 3.1 document', async () => {
      expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: 'ok' });
      expect(await (await fetch(`${gw.url}/readyz`)).json()).toEqual({ status: 'ready' });
      const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as {
        openapi: string;
        paths: Record<string, unknown>;
      };
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths)).toContain('/metrics');
    });

    it('answers unknown routes with a problem+json 404', async () => {
      const res = await fetch(`${gw.url}/api/v1/nothing-here`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    });

    it('requires a valid operator token for /metrics and lets every role read it', async () => {
      const none = await fetch(`${gw.url}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toContain('Bearer');
      expect(await none.json()).toMatchObject({ code: 'AUTH_REQUIRED' });
      const bad = await gw.asUser(`saf_${'x'.repeat(43)}`, '/metrics');
      expect(bad.status).toBe(401);
      expect(await bad.json()).toMatchObject({ code: 'INVALID_TOKEN' });
      const viewer = await gw.asUser(await gw.token('viewer'), '/metrics');
      expect(viewer.status).toBe(200);
      expect(await viewer.text()).toContain('saffron_http_requests_total');
    });

    it('authenticates a signed device, then refuses it where devices are not admitted', async () => {
      const secret = await gw.insertDevice('pos-1');
      const res = await gw.asDevice('pos-1', secret, '/metrics');
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'FORBIDDEN' });
    });

    it('rejects every broken device signature with a 401 naming the check', async () => {
      const secret = await gw.insertDevice('pos-2');
      const signed = (overrides: Record<string, string> = {}, key = secret) => ({
        ...deviceAuthHeaders('pos-2', key, { method: 'GET', pathWithQuery: '/metrics', body: '' }),
        ...overrides,
      });
      const codeOf = async (headers: Record<string, string>) => {
        const res = await fetch(`${gw.url}/metrics`, { headers });
        expect(res.status).toBe(401);
        return ((await res.json()) as { code: string }).code;
      };
      expect(await codeOf(signed({}, 'not-the-secret'))).toBe('INVALID_SIGNATURE');
      expect(await codeOf(signed({ authorization: 'Device pos-2' }))).toBe('MALFORMED_CREDENTIALS');
      expect(await codeOf(signed({ 'x-saffron-timestamp': 'yesterday' }))).toBe(
        'TIMESTAMP_INVALID',
      );
      const old = new Date(Date.now() - 301_000).toISOString();
      expect(
        await codeOf({
          ...deviceAuthHeaders('pos-2', secret, {
            method: 'GET',
            pathWithQuery: '/metrics',
            body: '',
            timestamp: old,
          }),
        }),
      ).toBe('TIMESTAMP_OUT_OF_WINDOW');
      expect(await codeOf(signed({ 'x-saffron-nonce': 'short' }))).toBe('NONCE_INVALID');
      // a signature for another path does not carry over
      const other = deviceAuthHeaders('pos-2', secret, {
        method: 'GET',
        pathWithQuery: '/readyz',
        body: '',
      });
      expect(await codeOf(other)).toBe('INVALID_SIGNATURE');
      // an unknown device fails exactly like a wrong signature
      expect(
        await codeOf(
          deviceAuthHeaders('ghost', secret, {
            method: 'GET',
            pathWithQuery: '/metrics',
            body: '',
          }),
        ),
      ).toBe('INVALID_SIGNATURE');
      // a replayed request: the first passes authentication (403 here), the replay is refused
      const once = signed();
      expect((await fetch(`${gw.url}/metrics`, { headers: once })).status).toBe(403);
      expect(await codeOf(once)).toBe('REPLAYED_REQUEST');
    });
  });
}
