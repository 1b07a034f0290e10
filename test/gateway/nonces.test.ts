/**
 * Replay protection across gateway processes: a signed device request accepted by one
 * gateway is refused by another on the same database, each strict nonce is accepted exactly
 * once even when gateways race on it, and expired nonces are purged (and may not block a
 * device once their window is over). The write-behind of reads and the socket's challenge
 * are test/security/replay.test.ts's.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway, deviceAuthHeaders, type Gateway } from '../../gateway/index.js';
import { createNonceCache } from '../../gateway/auth/nonces.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

for (const dialect of CLOUD_DIALECTS) {
  describe(`shared nonce cache on ${dialect.name}`, () => {
    let gw: TestGateway;
    let second: Gateway;
    let secondUrl: string;

    beforeAll(async () => {
      gw = await startTestGateway(dialect);
      second = await createGateway({
        store: gw.handle.store,
        keys: gw.keys,
        wasmStorageDir: mkdtempSync(join(tmpdir(), 'saffron-wasm-')),
      });
      secondUrl = await second.listen(0);
    });
    afterAll(async () => {
      await second.close();
      await gw.close();
    });

    it('refuses on a second gateway a request the first one accepted', async () => {
      const secret = await gw.insertDevice('nonce-dev-1');
      const path = '/api/v1/devices/nonce-dev-1';
      const headers = deviceAuthHeaders('nonce-dev-1', secret, {
        method: 'GET',
        pathWithQuery: path,
        body: '',
      });
      expect((await fetch(`${gw.url}${path}`, { headers })).status).toBe(200);
      // a read's nonce is written behind (on PGlite, one process, it is checked strictly):
      // once it is written, the other gateway hears of it
      await gw.gateway.context.auth.nonces.flush();
      if (dialect.name === 'postgres')
        await vi.waitFor(() =>
          expect(
            second.context.auth.nonces.knows(
              'nonce-dev-1',
              headers['x-saffron-nonce']!,
              Date.now(),
            ),
          ).toBe(true),
        );
      const replay = await fetch(`${secondUrl}${path}`, { headers });
      expect(replay.status).toBe(401);
      expect(((await replay.json()) as { code: string }).code).toBe('REPLAYED_REQUEST');
      // and a fresh request still passes on the second gateway
      const fresh = deviceAuthHeaders('nonce-dev-1', secret, {
        method: 'GET',
        pathWithQuery: path,
        body: '',
      });
      expect((await fetch(`${secondUrl}${path}`, { headers: fresh })).status).toBe(200);
    });

    it('accepts a nonce exactly once when two caches race, again after its window, and purges it', async () => {
      const windowMs = 600_000;
      const a = createNonceCache(gw.handle.store, { windowMs });
      const b = createNonceCache(gw.handle.store, { windowMs });
      const t0 = Date.now();
      const nonce = 'race-nonce-0123456789';
      const results = await Promise.all([
        a.remember('nonce-dev-2', nonce, t0, 'strict'),
        b.remember('nonce-dev-2', nonce, t0, 'strict'),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      // the same nonce of another device is a different nonce
      expect(await a.remember('nonce-dev-3', nonce, t0, 'strict')).toBe(true);

      const rows = () =>
        gw.handle.store.cloud
          .selectFrom('device_request_nonces')
          .select(['device_id', 'nonce'])
          .where('nonce', '=', nonce)
          .execute();
      expect(await rows()).toHaveLength(2);
      // purging before the window ends keeps them (older rows of other tests may go)
      await a.purge(t0 + windowMs - 1);
      expect(await rows()).toHaveLength(2);
      // a fresh cache after the window (a restarted gateway) takes the expired nonce anew
      const later = createNonceCache(gw.handle.store, { windowMs });
      expect(await later.remember('nonce-dev-2', nonce, t0 + windowMs + 1, 'strict')).toBe(true);
      expect(await later.remember('nonce-dev-2', nonce, t0 + windowMs + 2, 'strict')).toBe(false);
      // the other device's row has expired by then and is purged; the renewed one stays
      expect(await a.purge(t0 + windowMs + 1)).toBeGreaterThanOrEqual(1);
      expect(await rows()).toEqual([{ device_id: 'nonce-dev-2', nonce }]);
    });
  });
}
