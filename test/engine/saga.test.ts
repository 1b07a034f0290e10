/** Saga compensation, sub-workflows and HTTP steps through the engine, on every dialect. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { fakeClock, definition, engineFor, type FakeClock } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

let server: Server;
let baseUrl = '';
const received: { url: string; auth: string | undefined; body: string }[] = [];
let failuresLeft = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ url: req.url ?? '', auth: req.headers.authorization, body });
      if (failuresLeft > 0) {
        failuresLeft--;
        res.writeHead(503).end('try later');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ approved: true, echo: JSON.parse(body || '{}') as unknown }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const SAGA = `
workflow_type: order
automate_next: true
steps:
  - { name: reserve, type: STANDARD, function: steps.reserve, compensate_function: steps.unreserve }
  - { name: charge, type: STANDARD, function: steps.charge, compensate_function: steps.refund }
  - { name: skipped, type: STANDARD, function: steps.mark }
  - { name: ship, type: STANDARD, function: steps.ship }
`;

for (const dialect of DIALECTS) {
  describe(`saga, sub-workflows and HTTP on ${dialect.name}`, () => {
    let handle: TestStore;
    let rt: Runtime;
    let clock: FakeClock;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      clock = fakeClock();
      rt = engineFor(handle, { clock });
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });

    it('compensates in reverse order, including a step that left by a jump, and ends FAILED_ROLLED_BACK', async () => {
      const wf = await rt.start(await definition(SAGA), { ship_fails: true });
      expect(wf.status).toBe('FAILED_ROLLED_BACK');
      expect(wf.state.ledger).toEqual(['reserve', 'charge', 'refund', 'unreserve']);
      expect(wf.state.reserved).toBe(false);
      const trail = (await rt.audit(wf.id)).map((e) => `${e.eventType}:${e.stepName ?? ''}`);
      expect(trail).toEqual([
        'WORKFLOW_STARTED:',
        'STEP_EXECUTED:reserve',
        'STEP_EXECUTED:charge',
        'JUMPED:charge',
        'STEP_FAILED:ship',
        'COMPENSATION_STARTED:charge',
        'COMPENSATION_COMPLETED:charge',
        'COMPENSATION_STARTED:reserve',
        'COMPENSATION_COMPLETED:reserve',
        'WORKFLOW_FAILED:',
      ]);
      const log = await handle.store.db
        .selectFrom('compensation_log')
        .select(['step_name', 'compensation_function', 'status', 'state_before', 'state_after'])
        .where('workflow_id', '=', wf.id)
        .orderBy('id')
        .execute();
      expect(log.map((r) => [r.step_name, r.compensation_function, r.status])).toEqual([
        ['charge', 'steps.refund', 'COMPLETED'],
        ['reserve', 'steps.unreserve', 'COMPLETED'],
      ]);
      expect(handle.store.codec.parseJson(log[0]!.state_before)).toMatchObject({
        ledger: ['reserve', 'charge'],
      });
      expect(handle.store.codec.parseJson(log[1]!.state_after)).toMatchObject({ reserved: false });
    });

    it('records a failing compensation and goes on with the rest', async () => {
      const def = await definition(`
workflow_type: bad_undo
automate_next: true
steps:
  - { name: first, type: STANDARD, function: steps.reserve, compensate_function: steps.unreserve }
  - { name: second, type: STANDARD, function: steps.reserve, compensate_function: steps.broken_compensation }
  - { name: third, type: STANDARD, function: steps.always_fail }
`);
      const wf = await rt.start(def);
      expect(wf.status).toBe('FAILED_ROLLED_BACK');
      expect(wf.state.ledger).toEqual(['reserve', 'reserve', 'unreserve']);
      const statuses = await handle.store.db
        .selectFrom('compensation_log')
        .select(['step_name', 'status', 'error'])
        .where('workflow_id', '=', wf.id)
        .orderBy('id')
        .execute();
      expect(statuses.map((s) => [s.step_name, s.status])).toEqual([
        ['second', 'FAILED'],
        ['first', 'COMPLETED'],
      ]);
      expect(statuses[0]!.error).toContain('compensation exploded');
    });

    it('fails without rollback when nothing registered a compensation', async () => {
      const wf = await rt.start(
        await definition(`
workflow_type: plain_fail
steps:
  - { name: only, type: STANDARD, function: steps.always_fail }
`),
      );
      expect(wf.status).toBe('FAILED');
    });

    it('waits for a sub-workflow and lands its final state under sub_workflow_results', async () => {
      rt.registry.register(
        await definition(`
workflow_type: child_flow
automate_next: true
steps:
  - { name: double, type: STANDARD, function: steps.double_seed }
`),
      );
      const parent = await definition(`
workflow_type: parent_flow
automate_next: true
steps:
  - { name: delegate, type: STANDARD, function: steps.start_child }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      const started = await rt.start(parent, { seed: 5 });
      expect(['PENDING_SUB_WORKFLOW', 'COMPLETED']).toContain(started.status);
      await rt.drain();
      const done = await rt.get(started.id);
      expect(done.status).toBe('COMPLETED');
      expect(done.state).toMatchObject({
        sub_workflow_results: { child_flow: { seed: 5, doubled: 10 } },
        visited: ['finish'],
      });
      const children = await rt.list({ parentWorkflowId: started.id });
      expect(children).toHaveLength(1);
      expect(children[0]).toMatchObject({ workflowType: 'child_flow', status: 'COMPLETED' });
    });

    it('fails the parent (and rolls it back) when its sub-workflow fails', async () => {
      rt.registry.register(
        await definition(`
workflow_type: failing_child
steps:
  - { name: crash, type: STANDARD, function: steps.always_fail }
`),
      );
      const parent = await definition(`
workflow_type: parent_of_failure
automate_next: true
steps:
  - { name: hold, type: STANDARD, function: steps.reserve, compensate_function: steps.unreserve }
  - { name: delegate, type: STANDARD, function: steps.start_failing_child }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      const started = await rt.start(parent);
      await rt.drain();
      const done = await rt.get(started.id);
      expect(done.status).toBe('FAILED_ROLLED_BACK');
      const failed = (await rt.audit(done.id)).find((e) => e.eventType === 'STEP_FAILED');
      expect(failed).toMatchObject({
        stepName: 'delegate',
        eventData: { error: { code: 'SUB_WORKFLOW_FAILED' } },
      });
    });

    it('calls HTTP with templates and secrets, keeps only the included fields, and never stores the secret', async () => {
      received.length = 0;
      const def = await definition(`
workflow_type: http_call
automate_next: true
steps:
  - name: call
    type: HTTP
    http_config:
      method: POST
      url: "{{ state.base }}/authorize"
      headers: { Authorization: "Bearer {{ secrets.API_TOKEN }}" }
      query_params: { terminal: "{{ state.terminal }}" }
      body: { amount: "{{ state.amount }}" }
    output_key: acquirer
    includes: [status_code, body]
`);
      const wf = await rt.start(def, { base: baseUrl, terminal: 'pos-1', amount: 1250 });
      expect(wf.status).toBe('COMPLETED');
      expect(received[0]).toMatchObject({
        url: '/authorize?terminal=pos-1',
        auth: 'Bearer s3cr3t-token',
      });
      expect(JSON.parse(received[0]!.body)).toEqual({ amount: 1250 });
      expect(wf.state.acquirer).toEqual({
        status_code: 200,
        body: { approved: true, echo: { amount: 1250 } },
      });
      const stored = JSON.stringify(
        await handle.store.db
          .selectFrom('workflow_executions')
          .selectAll()
          .where('id', '=', wf.id)
          .executeTakeFirst(),
      );
      expect(stored).not.toContain('s3cr3t-token');
    });

    it('retries a failing HTTP call after a durable delay and succeeds', async () => {
      received.length = 0;
      failuresLeft = 2;
      const def = await definition(`
workflow_type: http_retry
automate_next: true
steps:
  - name: call
    type: HTTP
    http_config:
      method: GET
      url: "${baseUrl}/status"
      retry_policy: { max_attempts: 3, delay_seconds: 7 }
    output_key: result
`);
      const wf = await rt.start(def);
      expect(wf.status).toBe('COMPLETED');
      expect(received).toHaveLength(3);
      expect(clock.slept).toEqual([7000, 7000]);
      const timers = await handle.store.db
        .selectFrom('workflow_timers')
        .select(['timer_kind', 'status'])
        .where('workflow_id', '=', wf.id)
        .execute();
      expect(timers).toEqual([
        { timer_kind: 'STEP_RETRY', status: 'FIRED' },
        { timer_kind: 'STEP_RETRY', status: 'FIRED' },
      ]);
      expect((await rt.audit(wf.id)).filter((e) => e.eventType === 'STEP_FAILED')).toHaveLength(2);
    });

    it('fails an HTTP step to an unreachable host with a typed error after its attempts', async () => {
      const def = await definition(`
workflow_type: http_unreachable
steps:
  - name: call
    type: HTTP
    http_config: { method: GET, url: "http://127.0.0.1:1/nothing", retry_policy: { max_attempts: 2, delay_seconds: 1 } }
    output_key: result
`);
      const wf = await rt.start(def, { keep: true });
      expect(wf).toMatchObject({ status: 'FAILED', currentStep: 'call', state: { keep: true } });
      const failures = (await rt.audit(wf.id)).filter((e) => e.eventType === 'STEP_FAILED');
      expect(failures).toHaveLength(2);
      expect(failures[1]!.eventData).toMatchObject({ error: { code: 'HTTP_UNREACHABLE' } });
    });
  });
}
