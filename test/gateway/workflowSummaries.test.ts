/**
 * Workflow summaries from devices over real HTTP: stored as device-owned workflow rows,
 * listed by owner, idempotent on retry, updated by a later end, each bad summary rejected by
 * itself, another device's path refused, and a summary row never retried by the cloud.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWorkflowRoutes } from '../../gateway/routes/workflows.js';
import { registerWorkflowSummaryRoutes } from '../../gateway/routes/workflowSummaries.js';
import { MAX_SUMMARY_BYTES, type WorkflowSummary } from '../../runtime/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { withoutRandomIds } from '../support/device.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

interface Answer {
  synced_ids: string[];
  duplicates: string[];
  rejected: { id: string | null; index: number; code: string; message: string }[];
}

const summary = (overrides: Partial<WorkflowSummary> = {}): WorkflowSummary => ({
  workflow_id: randomUUID(),
  workflow_type: 'pos_payment',
  workflow_version: '1',
  status: 'COMPLETED',
  current_step_index: 6,
  current_step: 'print_receipt',
  state: { amount_minor: 1250, decision: { status: 'APPROVED', mode: 'OFFLINE' } },
  created_at: '2026-11-20T10:00:00.000Z',
  completed_at: '2026-11-20T10:00:00.004Z',
  ...overrides,
});

for (const dialect of CLOUD_DIALECTS) {
  describe(`workflow summaries on ${dialect.name}`, () => {
    let gw: TestGateway;
    let secret: string;
    let otherSecret: string;
    const path = (deviceId: string) => `/api/v1/devices/${deviceId}/workflow-summaries`;
    const upload = async (body: unknown, deviceId = 'pos-1', key = secret, at = deviceId) => {
      const res = await gw.asDevice(deviceId, key, path(at), {
        method: 'POST',
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Answer & { code?: string } };
    };
    const row = (id: string) =>
      gw.handle.store.db
        .selectFrom('workflow_executions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();

    beforeAll(async () => {
      gw = await startTestGateway(dialect, {
        routes: [registerWorkflowRoutes, registerWorkflowSummaryRoutes],
      });
      secret = await gw.insertDevice('pos-1');
      otherSecret = await gw.insertDevice('pos-2');
    });
    afterAll(async () => {
      await gw.close();
    });

    it('keeps each summary as a workflow of the device, listed by owner and readable', async () => {
      const done = summary();
      const failed = summary({ status: 'FAILED', current_step: 'request_authorization' });
      const res = await upload({ summaries: [done, failed] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        synced_ids: [done.workflow_id, failed.workflow_id],
        duplicates: [],
        rejected: [],
      });
      const stored = await row(done.workflow_id);
      expect(stored).toMatchObject({
        workflow_type: 'pos_payment',
        workflow_version: '1',
        status: 'COMPLETED',
        current_step_index: 6,
        current_step: 'print_receipt',
        owner_id: 'pos-1',
        actor_snapshot: null,
        definition_snapshot: null,
      });
      const metadata = gw.handle.store.codec.parseJson(stored!.metadata) as Record<string, unknown>;
      expect(metadata).toMatchObject({ source: 'edge', device_id: 'pos-1' });
      expect(gw.handle.store.codec.parseTime(stored!.updated_at).toISOString()).toBe(
        done.completed_at,
      );

      const viewer = await gw.token('viewer');
      const list = await gw.asUser(viewer, '/api/v1/workflows?owner_id=pos-1');
      const listed = (await list.json()) as { items: { id: string; status: string }[] };
      expect(list.status).toBe(200);
      expect(listed.items.map((w) => w.id).sort()).toEqual(
        [done.workflow_id, failed.workflow_id].sort(),
      );
      const one = await gw.asUser(viewer, `/api/v1/workflows/${done.workflow_id}`);
      expect(await one.json()).toMatchObject({ status: 'COMPLETED', state: done.state });

      // the cloud does not run it: a retry is refused and changes nothing
      const operator = await gw.token('operator');
      const retry = await gw.asUser(operator, `/api/v1/workflows/${failed.workflow_id}/retry`, {
        method: 'POST',
      });
      expect(retry.status).toBe(409);
      expect(((await retry.json()) as { code: string }).code).toBe('EDGE_WORKFLOW');
      expect((await row(failed.workflow_id))?.status).toBe('FAILED');
    });

    it('answers a retried upload the same, and takes a later end of the same workflow', async () => {
      const first = summary({ status: 'FAILED' });
      expect((await upload({ summaries: [first] })).body.synced_ids).toEqual([first.workflow_id]);
      const again = await upload({ summaries: [first] });
      expect(again.body).toEqual({
        synced_ids: [first.workflow_id],
        duplicates: [first.workflow_id],
        rejected: [],
      });
      const later = {
        ...first,
        status: 'COMPLETED' as const,
        completed_at: '2026-11-20T10:05:00.000Z',
        state: { retried: true },
      };
      const res = await upload({ summaries: [later] });
      expect(res.body).toEqual({ synced_ids: [first.workflow_id], duplicates: [], rejected: [] });
      const stored = await row(first.workflow_id);
      expect(stored?.status).toBe('COMPLETED');
      expect(gw.handle.store.codec.parseJson(stored!.state)).toEqual({ retried: true });
      // an older end arriving late does not undo the newer one
      const stale = await upload({ summaries: [first] });
      expect(stale.body.duplicates).toEqual([first.workflow_id]);
      expect((await row(first.workflow_id))?.status).toBe('COMPLETED');
    });

    it('rejects each bad summary by itself and stores the good ones', async () => {
      const good = summary();
      const taken = summary();
      expect((await upload({ summaries: [taken] }, 'pos-2', otherSecret)).status).toBe(200);
      const all = [
        good,
        summary({ state: { receipt: 'card 4111 1111 1111 1111 approved' } }),
        { ...summary(), status: 'ACTIVE' },
        { ...summary(), extra: 1 },
        summary({ state: { blob: 'x'.repeat(MAX_SUMMARY_BYTES) } }),
        { ...good, state: { other: true } },
        taken,
        'not a summary',
      ];
      const res = await upload({ summaries: all });
      expect(res.status).toBe(200);
      expect(res.body.synced_ids).toEqual([good.workflow_id]);
      expect(res.body.rejected.map((r) => [r.index, r.code])).toEqual([
        [1, 'CARD_DATA_IN_CLEAR'],
        [2, 'INVALID_SUMMARY'],
        [3, 'INVALID_SUMMARY'],
        [4, 'SUMMARY_TOO_LARGE'],
        [5, 'IDEMPOTENCY_CONFLICT'],
        [6, 'IDEMPOTENCY_CONFLICT'],
        [7, 'INVALID_SUMMARY'],
      ]);
      expect(withoutRandomIds(JSON.stringify(res.body))).not.toContain('4111');
      for (const bad of all.slice(1, 5))
        expect(await row((bad as WorkflowSummary).workflow_id)).toBeUndefined();
      expect((await row(taken.workflow_id))?.owner_id).toBe('pos-2');
      expect((await row(good.workflow_id))?.state).toBeDefined();
    });

    it('refuses a summary id that belongs to a cloud workflow', async () => {
      const id = randomUUID();
      await gw.handle.store.db
        .insertInto('workflow_executions')
        .values({
          id,
          workflow_type: 'cloud_job',
          status: 'COMPLETED',
          current_step_index: 0,
          state: gw.handle.store.codec.json({}),
          owner_id: 'pos-1',
        })
        .execute();
      const res = await upload({ summaries: [summary({ workflow_id: id })] });
      expect(res.body.rejected.map((r) => r.code)).toEqual(['IDEMPOTENCY_CONFLICT']);
      expect((await row(id))?.workflow_type).toBe('cloud_job');
    });

    it('refuses other callers and malformed envelopes with nothing written', async () => {
      const s = summary();
      expect((await upload({ summaries: [s] }, 'pos-2', otherSecret, 'pos-1')).status).toBe(403);
      expect((await upload({ summaries: [s] }, 'pos-1', 'wrong-secret')).status).toBe(401);
      const operator = await gw.token('admin');
      const asAdmin = await gw.asUser(operator, path('pos-1'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ summaries: [s] }),
      });
      expect(asAdmin.status).toBe(403);
      for (const body of [{}, { summaries: [] }, [s], { summaries: [s], more: 1 }]) {
        const res = await upload(body);
        expect(res.status).toBe(422);
        expect(res.body.code).toBe('VALIDATION_FAILED');
      }
      expect(await row(s.workflow_id)).toBeUndefined();
    });
  });
}
