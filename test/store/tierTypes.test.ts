/**
 * The database is typed per tier: `db` reaches the engine's tables, which both tiers have; a
 * cloud store adds `cloud` (the control plane's tables), an edge store `edge` (the
 * terminal's). A query on a table the store's tier does not have fails to compile — the
 * `@ts-expect-error` lines below are checked by `tsc` (`npm run check`), which fails if any
 * of them compiles. At run time, `asCloud` / `asEdge` refuse a store of the other tier.
 */
import { describe, expect, it } from 'vitest';
import {
  asCloud,
  asEdge,
  type CloudHandle,
  type EdgeHandle,
  type StoreHandle,
} from '../../runtime/index.js';
import { CLOUD_DIALECTS, EDGE_DIALECT, openWithSchema } from '../support/stores.js';

/** Never called: what it holds is checked by the compiler. */
export function queriesByTier(core: StoreHandle, cloud: CloudHandle, edge: EdgeHandle): void {
  void core.db.selectFrom('workflow_executions').selectAll();
  void cloud.cloud.selectFrom('webhook_deliveries').selectAll();
  void cloud.cloud.selectFrom('workflow_executions').selectAll();
  void edge.edge.selectFrom('saf_pending_transactions').selectAll();
  // @ts-expect-error the engine's view has no cloud table
  void core.db.selectFrom('edge_devices');
  // @ts-expect-error the engine's view has no terminal table
  void core.db.selectFrom('device_config_cache');
  // @ts-expect-error a terminal has no webhook deliveries
  void edge.edge.selectFrom('webhook_deliveries');
  // @ts-expect-error the cloud has no store-and-forward queue of its own
  void cloud.cloud.selectFrom('saf_pending_transactions');
  // @ts-expect-error an edge handle has no cloud view
  void edge.cloud;
}

describe('stores typed by tier', () => {
  it('gives each store the view of its own tier, and refuses the other', async () => {
    const edge = await openWithSchema(EDGE_DIALECT);
    const cloud = await openWithSchema(CLOUD_DIALECTS.at(-1)!);
    try {
      expect(asEdge(edge.store)).toBe(edge.store);
      expect(asCloud(cloud.store)).toBe(cloud.store);
      expect(() => asCloud(edge.store)).toThrow(/needs a cloud store/);
      expect(() => asEdge(cloud.store)).toThrow(/needs an edge store/);
      // a transaction's handle has its tier's view too, on the same transaction
      await edge.store.transaction(async (tx) => {
        expect(await tx.edge.selectFrom('saf_pending_transactions').selectAll().execute()).toEqual(
          [],
        );
      });
      await cloud.store.transaction(async (tx) => {
        expect(await tx.cloud.selectFrom('webhook_deliveries').selectAll().execute()).toEqual([]);
      });
    } finally {
      await edge.close();
      await cloud.close();
    }
  });
});
