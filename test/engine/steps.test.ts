/**
 * Step kinds, directives, routing, automate_next and the working-copy rule, on every store
 * dialect.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { getScheduledWorkflow, listTasks } from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const events = async (rt: Runtime, id: string) =>
  (await rt.audit(id)).map((e) => (e.stepName ? `${e.eventType}:${e.stepName}` : e.eventType));

for (const dialect of DIALECTS) {
  describe(`engine steps on ${dialect.name}`, () => {
    let handle: TestStore;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      rt = engineFor(handle);
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });

    it('runs STANDARD steps in order, merging returned objects, and completes', async () => {
      const def = await definition(`
workflow_type: counter
automate_next: true
initial_state: { increment: 2 }
steps:
  - { name: one, type: STANDARD, function: steps.add }
  - { name: two, type: STANDARD, function: steps.add }
  - { name: three, type: STANDARD, function: steps.mark }
`);
      const wf = await rt.start(def, { total: 1 });
      expect(wf).toMatchObject({
        status: 'COMPLETED',
        currentStep: null,
        currentStepIndex: 3,
        state: { total: 5, increment: 2, visited: ['three'] },
      });
      expect(await events(rt, wf.id)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED:one',
        'STEP_EXECUTED:two',
        'STEP_EXECUTED:three',
        'WORKFLOW_COMPLETED',
      ]);
    });

    it('stops after each step without automate_next, and next() runs one step with its input', async () => {
      const def = await definition(`
workflow_type: manual
steps:
  - { name: one, type: STANDARD, function: steps.add }
  - { name: two, type: STANDARD, function: steps.add, automate_next: true }
  - { name: three, type: STANDARD, function: steps.mark }
`);
      let wf = await rt.start(def);
      expect(wf).toMatchObject({ status: 'ACTIVE', currentStep: 'two', state: { total: 1 } });
      wf = await rt.next(wf.id, { increment: 10 });
      expect(wf).toMatchObject({
        status: 'COMPLETED',
        state: { total: 11, increment: 10, visited: ['three'] },
      });
    });

    it('keeps in-place changes on success and discards them on failure', async () => {
      const def = await definition(`
workflow_type: working_copy
automate_next: true
steps:
  - { name: keep, type: STANDARD, function: steps.mutate_in_place }
  - { name: fail, type: STANDARD, function: steps.mutate_then_fail }
`);
      const wf = await rt.start(def);
      expect(wf.status).toBe('FAILED');
      expect(wf.state).toEqual({ in_place: 'kept' });
      expect(wf.currentStep).toBe('fail');
      const trail = await rt.audit(wf.id);
      expect(trail.map((e) => e.eventType)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED',
        'STEP_FAILED',
        'WORKFLOW_FAILED',
      ]);
      expect(trail[2]!.eventData).toMatchObject({
        error: { code: 'STEP_FUNCTION_FAILED', step: 'fail' },
      });
      expect(String((trail[2]!.eventData.error as { message: string }).message)).toContain('boom');
    });

    it('fails a step that returns a non-object, leaving the workflow inspectable', async () => {
      for (const fn of ['return_number', 'return_array']) {
        const def = await definition(`
workflow_type: bad_return_${fn}
steps:
  - { name: bad, type: STANDARD, function: steps.${fn} }
`);
        const wf = await rt.start(def, { keep: 'me' });
        expect(wf).toMatchObject({ status: 'FAILED', currentStep: 'bad', state: { keep: 'me' } });
        const failed = (await rt.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED');
        expect(failed?.eventData).toMatchObject({ error: { code: 'STEP_RESULT_INVALID' } });
      }
    });

    it('routes DECISION steps: first matching condition, then default, then the jump directive', async () => {
      const def = await definition(`
workflow_type: routing
automate_next: true
steps:
  - name: decide
    type: DECISION
    function: steps.classify
    routes:
      - { condition: "state.band == 'high'", target: high }
      - { condition: "state.amount > 0", next_step: low }
      - default: finish
  - { name: low, type: STANDARD, function: steps.jump_to_finish }
  - { name: high, type: STANDARD, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      const high = await rt.start(def, { amount: 500 });
      expect(high.state.visited).toEqual(['high', 'finish']);
      const low = await rt.start(def, { amount: 5 });
      expect(low.state).toMatchObject({ visited: ['finish'], jumped: true });
      const none = await rt.start(def, { amount: -1 });
      expect(none.state.visited).toEqual(['finish']);
      expect(await events(rt, low.id)).toEqual([
        'WORKFLOW_STARTED',
        'STEP_EXECUTED:decide',
        'JUMPED:decide',
        'STEP_EXECUTED:low',
        'JUMPED:low',
        'STEP_EXECUTED:finish',
        'WORKFLOW_COMPLETED',
      ]);
    });

    it('fails a DECISION that matches nothing, and a jump to a step that does not exist', async () => {
      const noRoute = await definition(`
workflow_type: no_route
steps:
  - { name: decide, type: DECISION, function: steps.noop }
  - { name: after, type: STANDARD, function: steps.mark }
`);
      const a = await rt.start(noRoute);
      expect(a.status).toBe('FAILED');
      expect(
        (await rt.audit(a.id)).find((e) => e.eventType === 'STEP_FAILED')?.eventData,
      ).toMatchObject({ error: { code: 'DECISION_NO_ROUTE' } });
      const badJump = await definition(`
workflow_type: bad_jump
steps:
  - { name: hop, type: STANDARD, function: steps.jump_nowhere }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      const b = await rt.start(badJump);
      expect(b).toMatchObject({ status: 'FAILED', currentStep: 'hop' });
      expect(
        (await rt.audit(b.id)).find((e) => e.eventType === 'STEP_FAILED')?.eventData,
      ).toMatchObject({ error: { code: 'JUMP_TARGET_UNKNOWN' } });
    });

    it('accepts snake_case jump directives', async () => {
      const def = await definition(`
workflow_type: snake_jump
automate_next: true
steps:
  - { name: hop, type: STANDARD, function: steps.jump_snake }
  - { name: skipped, type: STANDARD, function: steps.mark }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      expect((await rt.start(def)).state.visited).toEqual(['finish']);
    });

    it('iterates a LOOP over a list with loop_item, loop_index and item_var_name, stopping at max_iterations', async () => {
      const def = await definition(`
workflow_type: iterate
automate_next: true
steps:
  - name: each
    type: LOOP
    mode: ITERATE
    iterate_over: batch.items
    item_var_name: txn
    max_iterations: 3
    loop_body:
      - { name: collect, type: STANDARD, function: steps.collect_item }
`);
      const wf = await rt.start(def, { batch: { items: ['a', 'b', 'c', 'd'] } });
      expect(wf.status).toBe('COMPLETED');
      expect(wf.state.seen).toEqual([
        { item: 'a', index: 0, named: 'a' },
        { item: 'b', index: 1, named: 'b' },
        { item: 'c', index: 2, named: 'c' },
      ]);
      const limit = (await rt.audit(wf.id)).find((e) => e.eventType === 'LOOP_LIMIT_REACHED');
      expect(limit).toMatchObject({ stepName: 'each', eventData: { max_iterations: 3, items: 4 } });
    });

    it('runs a WHILE loop until its condition is false, and fails on a non-list source', async () => {
      const def = await definition(`
workflow_type: while_loop
automate_next: true
steps:
  - name: count
    type: LOOP
    mode: WHILE
    while_condition: "state.counter < 4"
    max_iterations: 10
    loop_body:
      - { name: bump, type: STANDARD, function: steps.bump_counter }
`);
      const wf = await rt.start(def, { counter: 0 });
      expect(wf).toMatchObject({ status: 'COMPLETED', state: { counter: 4 } });
      expect((await rt.audit(wf.id)).some((e) => e.eventType === 'LOOP_LIMIT_REACHED')).toBe(false);
      const iterate = await definition(`
workflow_type: bad_source
steps:
  - { name: each, type: LOOP, mode: ITERATE, iterate_over: nothing, item_var_name: x, max_iterations: 2, loop_body: [{ name: c, type: STANDARD, function: steps.noop }] }
`);
      const bad = await rt.start(iterate, { nothing: 'not a list' });
      expect(bad.status).toBe('FAILED');
    });

    it('pauses at HUMAN_IN_LOOP and continues when resumed with input', async () => {
      const def = await definition(`
workflow_type: approval
automate_next: true
steps:
  - { name: review, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      let wf = await rt.start(def);
      expect(wf).toMatchObject({
        status: 'WAITING_HUMAN_INPUT',
        currentStep: 'review',
        state: { waiting_for: 'approval' },
      });
      await expect(rt.next(wf.id)).rejects.toMatchObject({ code: 'WORKFLOW_NOT_ACTIVE' });
      wf = await rt.resume(wf.id, { approved: false });
      expect(wf.status).toBe('WAITING_HUMAN_INPUT');
      wf = await rt.resume(wf.id, { approved: true, by: 'kim' });
      expect(wf).toMatchObject({
        status: 'COMPLETED',
        state: { approved: true, by: 'kim', approved_by: 'kim', visited: ['finish'] },
      });
      await expect(rt.resume(wf.id, {})).rejects.toMatchObject({ code: 'WORKFLOW_NOT_WAITING' });
      expect(await events(rt, wf.id)).toEqual([
        'WORKFLOW_STARTED',
        'WORKFLOW_PAUSED:review',
        'WORKFLOW_RESUMED:review',
        'WORKFLOW_PAUSED:review',
        'WORKFLOW_RESUMED:review',
        'STEP_EXECUTED:review',
        'STEP_EXECUTED:finish',
        'WORKFLOW_COMPLETED',
      ]);
    });

    it('spawns FIRE_AND_FORGET workflows independently, keeping only their id', async () => {
      const child = await definition(`
workflow_type: child_flow
automate_next: true
steps:
  - { name: double, type: STANDARD, function: steps.double_seed }
`);
      rt.registry.register(child);
      const def = await definition(`
workflow_type: spawner
automate_next: true
steps:
  - name: spawn
    type: FIRE_AND_FORGET
    target_workflow_type: child_flow
    initial_data_template: { seed: "{{ state.seed }}", label: "from {{ state.name }}" }
  - { name: finish, type: STANDARD, function: steps.mark }
`);
      const wf = await rt.start(def, { seed: 21, name: 'parent' });
      await rt.drain();
      const spawnedId = (wf.state.spawned_workflows as Record<string, string>).spawn!;
      const spawned = await rt.get(spawnedId);
      expect(spawned).toMatchObject({
        workflowType: 'child_flow',
        status: 'COMPLETED',
        parentWorkflowId: null,
        state: { seed: 21, label: 'from parent', doubled: 42 },
      });
      expect(spawned.metadata).toMatchObject({
        started_by: { workflow_id: wf.id, step: 'spawn', relation: 'spawned' },
      });
      expect(wf.status).toBe('COMPLETED');
    });

    it('registers and updates a CRON_SCHEDULE row', async () => {
      const def = await definition(`
workflow_type: scheduler
automate_next: true
steps:
  - name: register
    type: CRON_SCHEDULE
    schedule_name: "settle-{{ state.terminal }}"
    cron_expression: "0 2 * * *"
    target_workflow_type: nightly_settlement
    initial_data_template: { terminal: "{{ state.terminal }}" }
`);
      await rt.start(def, { terminal: 'pos-17' });
      const row = await getScheduledWorkflow(handle.store, 'settle-pos-17');
      expect(row).toMatchObject({
        cronExpression: '0 2 * * *',
        targetWorkflowType: 'nightly_settlement',
        initialData: { terminal: 'pos-17' },
        status: 'ACTIVE',
      });
      expect(row!.nextRunAt!.toISOString()).toBe('2026-01-01T02:00:00.000Z');
      const updated = await definition(`
workflow_type: scheduler
automate_next: true
steps:
  - { name: register, type: CRON_SCHEDULE, schedule_name: "settle-{{ state.terminal }}", cron_expression: "30 3 * * *", target_workflow_type: nightly_settlement, initial_data_template: {} }
`);
      await rt.start(updated, { terminal: 'pos-17' });
      expect((await getScheduledWorkflow(handle.store, 'settle-pos-17'))?.cronExpression).toBe(
        '30 3 * * *',
      );
    });

    it('writes step logs with levels and a duration metric per step', async () => {
      const def = await definition(`
workflow_type: logging
steps:
  - { name: talk, type: STANDARD, function: steps.log_things }
`);
      const wf = await rt.start(def);
      const logs = await handle.store.db
        .selectFrom('workflow_execution_logs')
        .select(['level', 'message', 'step_name'])
        .where('workflow_id', '=', wf.id)
        .orderBy('id')
        .execute();
      expect(logs).toEqual([
        { level: 'info', message: 'plain info', step_name: 'talk' },
        { level: 'warn', message: 'careful', step_name: 'talk' },
        { level: 'error', message: 'bad news', step_name: 'talk' },
      ]);
      const metrics = await handle.store.db
        .selectFrom('workflow_metrics')
        .select(['metric_name', 'step_name', 'metric_value'])
        .where('workflow_id', '=', wf.id)
        .execute();
      expect(metrics).toHaveLength(1);
      expect(metrics[0]).toMatchObject({ metric_name: 'step_duration_ms', step_name: 'talk' });
      expect(Number(metrics[0]!.metric_value)).toBeGreaterThanOrEqual(0);
    });

    it('fails a WASM step whose module is not stored, naming the step and the hash', async () => {
      const def = await definition(`
workflow_type: needs_wasm
steps:
  - name: score
    type: WASM
    wasm_config: { wasm_hash: "${'a'.repeat(64)}" }
`);
      const wf = await rt.start(def);
      expect(wf.status).toBe('FAILED');
      expect(
        (await rt.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED')?.eventData,
      ).toMatchObject({
        error: {
          code: 'WASM_MODULE_NOT_FOUND',
          message: `WASM step 'score' (module ${'a'.repeat(64)}): no binary with this hash is stored here`,
        },
      });
      expect(await listTasks(handle.store, wf.id)).toEqual([]);
    });
  });
}
