/**
 * The gateway's periodic passes on a real store: the trend sampler and the rate-limit purge
 * run one pass at a time, and closing either waits for the pass in progress, so none of them
 * touches a database that the gateway closes right after.
 */
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../gateway/governance/rateLimiter.js';
import { createTrends } from '../../gateway/trends/index.js';
import type { CloudStore } from '../../runtime/index.js';
import { CLOUD_DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

for (const dialect of CLOUD_DIALECTS) {
  describe(`periodic passes on '${dialect.name}'`, () => {
    let handle: TestStore<CloudStore>;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
    }, 60_000);
    afterEach(async () => {
      await handle.close();
    });

    it('closing the trends waits for the sample in progress', async () => {
      const errors: unknown[] = [];
      const trends = createTrends(handle.store, () => new Date(), {
        sampleMs: 3_600_000,
        onError: (error) => errors.push(error),
      });
      await trends.start();
      const order: string[] = [];
      const sampled = trends.sample().then(() => order.push('sampled'));
      await trends.close();
      order.push('closed');
      await sampled;
      expect(order).toEqual(['sampled', 'closed']);
      expect(errors).toEqual([]);
    });

    it('a purge asked for during another joins it; closing the limiter waits for it', async () => {
      const errors: unknown[] = [];
      const limiter = createRateLimiter(
        {
          store: handle.store,
          now: () => new Date(),
          metrics: new Registry(),
          onError: (error) => errors.push(error),
        },
        { purgeIntervalMs: 3_600_000 },
      );
      const order: string[] = [];
      const first = limiter.purge();
      expect(limiter.purge()).toBe(first);
      const purged = first.then((deleted) => order.push(`purged ${deleted}`));
      await limiter.close();
      order.push('closed');
      await purged;
      expect(order).toEqual(['purged 0', 'closed']);
      expect(errors).toEqual([]);
    });
  });
}
