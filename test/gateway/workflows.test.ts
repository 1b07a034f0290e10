/**
 * The workflows API over real HTTP: definitions registered at runtime (and restored after a
 * restart), start, read, list with filters and keyset paging, next / resume / retry / cancel,
 * the audit trail, roles, and validation errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../gateway/index.js';
import { ENGINE_STEPS } from '../support/engine.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { CLOUD_DIALECTS } from '../support/stores.js';

const APPROVAL = `
workflow_type: api_approval
workflow_version: "1"
automate_next: true
steps:
  - { name: prepare, type: STANDARD, function: steps.mark }
  - { name: approve, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: finish, type: STANDARD, function: steps.mark }
`;
const FAILING = `
workflow_type: api_failing
automate_next: true
steps:
  - { name: boom, type: STANDARD, function: steps.always_fail }
`;

type Json = Record<string, unknown>;

for (const dialect of CLOUD_DIALECTS) {
  describe(`workflows API on ${dialect.name}`, () => {
    let gw: TestGateway;
    let operator: string;
    let viewer: string;
    const post = (path: string, body: unknown, token = operator) =>
      gw.asUser(token, path, { method: 'POST', body: JSON.stringify(body) });
    const json = async (res: Response) => (await res.json()) as Json;

    beforeAll(async () => {
      gw = await startTestGateway(dialect, { stepsRoot: ENGINE_STEPS });
      operator = await gw.token('operator');
      viewer = await gw.token('viewer');
    });
    afterAll(async () => {
      await gw.close();
    });

    it('registers definitions as admin only, with line-numbered errors for bad YAML', async () => {
      expect((await post('/api/v1/workflow-definitions', { yaml: APPROVAL })).status).toBe(403);
      const ok = await post('/api/v1/workflow-definitions', { yaml: APPROVAL }, gw.adminToken);
      expect(ok.status).toBe(201);
      expect(await json(ok)).toMatchObject({ workflow_type: 'api_approval', created: true });
      const again = await post('/api/v1/workflow-definitions', { yaml: APPROVAL }, gw.adminToken);
      expect(await json(again)).toMatchObject({ created: false });
      await post('/api/v1/workflow-definitions', { yaml: FAILING }, gw.adminToken);
      const bad = await post(
        '/api/v1/workflow-definitions',
        { yaml: APPROVAL.replace('HUMAN_IN_LOOP', 'HUMAN_IN_LOOPS') },
        gw.adminToken,
      );
      expect(bad.status).toBe(422);
      const problem = await json(bad);
      expect(problem).toMatchObject({ code: 'DEFINITION_INVALID' });
      expect((problem.errors as Json[])[0]).toMatchObject({ line: 7 });
      const list = await json(await gw.asUser(viewer, '/api/v1/workflow-definitions'));
      expect((list.definitions as Json[]).map((d) => d.workflow_type).sort()).toEqual([
        'api_approval',
        'api_failing',
      ]);
    });

    it('starts, resumes and audits a workflow; viewers read but cannot drive', async () => {
      const started = await post('/api/v1/workflows', {
        workflow_type: 'api_approval',
        data: { amount: 5 },
        idempotency_key: 'api-1',
      });
      expect(started.status).toBe(201);
      const wf = await json(started);
      expect(wf).toMatchObject({ status: 'WAITING_HUMAN_INPUT', current_step: 'approve' });
      // the same idempotency key returns the same workflow
      const twice = await json(
        await post('/api/v1/workflows', {
          workflow_type: 'api_approval',
          idempotency_key: 'api-1',
        }),
      );
      expect(twice.id).toBe(wf.id);
      // the statechart shows where it waits
      const chartOf = async () =>
        json(await gw.asUser(viewer, `/api/v1/workflows/${String(wf.id)}/statechart`));
      const waiting = await chartOf();
      expect(waiting.active).toEqual({ state: 'approve', substate: 'waitingHuman' });
      const machine = waiting.machine as { nodes: Json[]; edges: Json[] };
      expect(machine.nodes.map((n) => n.id)).toEqual(
        expect.arrayContaining(['prepare', 'approve', 'finish', 'completed']),
      );
      expect(machine.edges).toContainEqual({
        from: 'approve',
        to: 'finish',
        event: 'wf.step.completed',
      });
      expect(
        (
          await post(
            `/api/v1/workflows/${String(wf.id)}/resume`,
            { input: { approved: true } },
            viewer,
          )
        ).status,
      ).toBe(403);
      const resumed = await json(
        await post(`/api/v1/workflows/${String(wf.id)}/resume`, {
          input: { approved: true, by: 'ana' },
        }),
      );
      expect(resumed).toMatchObject({
        status: 'COMPLETED',
        state: { approved_by: 'ana', visited: ['prepare', 'finish'] },
      });
      const read = await json(await gw.asUser(viewer, `/api/v1/workflows/${String(wf.id)}`));
      expect(read.status).toBe('COMPLETED');
      const done = await chartOf();
      expect(done.active).toEqual({ state: 'completed', substate: null });
      expect(done.version).toBeGreaterThan(waiting.version as number);
      const audit = await json(await gw.asUser(viewer, `/api/v1/workflows/${String(wf.id)}/audit`));
      expect((audit.events as Json[]).map((e) => e.event_type)).toContain('WORKFLOW_RESUMED');
      // resuming again is a conflict
      const late = await post(`/api/v1/workflows/${String(wf.id)}/resume`, { input: {} });
      expect(late.status).toBe(409);
      expect(await json(late)).toMatchObject({ code: 'WORKFLOW_NOT_WAITING' });
    });

    it('retries and cancels, and answers 404 / 422 / 400 with problem+json', async () => {
      const failed = await json(await post('/api/v1/workflows', { workflow_type: 'api_failing' }));
      expect(failed.status).toBe('FAILED');
      expect(failed.error).toMatchObject({ step: 'boom' });
      const retried = await json(await post(`/api/v1/workflows/${String(failed.id)}/retry`, {}));
      expect(retried.status).toBe('FAILED'); // fails again, but it ran again
      const waiting = await json(
        await post('/api/v1/workflows', { workflow_type: 'api_approval' }),
      );
      const cancelled = await json(
        await post(`/api/v1/workflows/${String(waiting.id)}/cancel`, { reason: 'test' }),
      );
      expect(cancelled.status).toBe('CANCELLED');

      const missing = await gw.asUser(
        viewer,
        '/api/v1/workflows/00000000-0000-4000-8000-000000000000',
      );
      expect(missing.status).toBe(404);
      expect(await json(missing)).toMatchObject({ code: 'WORKFLOW_NOT_FOUND' });
      expect((await gw.asUser(viewer, '/api/v1/workflows/not-a-uuid')).status).toBe(400);
      const unknown = await post('/api/v1/workflows', { workflow_type: 'nope' });
      expect(unknown.status).toBe(422);
      const invalid = await post('/api/v1/workflows', { workflow_type: 7, extra: true });
      expect(invalid.status).toBe(422);
      expect((await json(invalid)).errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: '$.workflow_type' })]),
      );
      const malformed = await gw.asUser(operator, '/api/v1/workflows', {
        method: 'POST',
        body: '{"workflow_type": ',
      });
      expect(malformed.status).toBe(400);
      expect(await json(malformed)).toMatchObject({ code: 'MALFORMED_JSON' });
    });

    it('lists with filters and keyset paging', async () => {
      for (let i = 0; i < 5; i++)
        await post('/api/v1/workflows', { workflow_type: 'api_approval', owner_id: 'paging' });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = await json(
          await gw.asUser(
            viewer,
            `/api/v1/workflows?owner_id=paging&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          ),
        );
        seen.push(...(page.items as Json[]).map((w) => String(w.id)));
        cursor = page.next_cursor as string | null;
      } while (cursor);
      expect(seen).toHaveLength(5);
      expect(new Set(seen).size).toBe(5);
      const waiting = await json(
        await gw.asUser(viewer, '/api/v1/workflows?status=WAITING_HUMAN_INPUT&limit=500'),
      );
      expect((waiting.items as Json[]).every((w) => w.status === 'WAITING_HUMAN_INPUT')).toBe(true);
      expect((await gw.asUser(viewer, '/api/v1/workflows?status=NOPE')).status).toBe(400);
      expect((await gw.asUser(viewer, '/api/v1/workflows?cursor=garbage')).status).toBe(400);
    });

    it('serves registered definitions again after a restart', async () => {
      const second = await createGateway({
        store: gw.handle.store,
        keys: gw.keys,
        stepsRoot: ENGINE_STEPS,
      });
      try {
        expect(second.context.runtime.registry.get('api_approval')).toBeDefined();
      } finally {
        await second.close();
      }
    });
  });
}
