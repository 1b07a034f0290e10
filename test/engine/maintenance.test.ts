/**
 * Maintenance passes: zombie recovery (simulated crash and a real SIGKILL), PARALLEL timeouts
 * as durable timers, and cron schedules fired once per tick — also with two schedulers — with
 * bounded catch-up after downtime.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../actors/index.js';
import { SimulatedCrash, systemClock } from '../../runtime/index.js';
import { definition, engineFor, fakeClock, type FakeClock } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const THREE = `
workflow_type: three
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: two, type: STANDARD, function: steps.mark }
  - { name: three, type: STANDARD, function: steps.mark }
`;

for (const dialect of DIALECTS) {
  describe(`maintenance on ${dialect.name}`, () => {
    let handle: TestStore;
    let clock: FakeClock;
    let rt: Runtime;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      clock = fakeClock();
      rt = engineFor(handle, { clock, workerId: 'survivor' });
    });
    afterEach(async () => {
      await rt.close();
      await handle.close();
    });

    it('recovers a workflow whose driver died mid-run, and leaves an idle ACTIVE workflow alone', async () => {
      const crashing = engineFor(handle, {
        clock,
        workerId: 'doomed',
        faults: (point, at) => {
          if (point === 'after-commit' && at.stepName === 'one') throw new SimulatedCrash('gone');
        },
      });
      const def = await definition(THREE);
      await expect(crashing.start(def)).rejects.toBeInstanceOf(SimulatedCrash);
      const [victim] = await rt.list({ workflowType: 'three' });
      const idle = await rt.start(
        await definition(
          THREE.replace('automate_next: true', 'automate_next: false').replace(
            'three\n',
            'idle_three\n',
          ),
        ),
      );
      expect(idle).toMatchObject({ status: 'ACTIVE', currentStep: 'two' });

      expect((await rt.maintain()).recovered).toBe(0); // not stale yet
      clock.advance(91_000);
      expect((await rt.maintain()).recovered).toBe(1);
      await rt.drain();
      const done = await rt.get(victim!.id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: { visited: ['one', 'two', 'three'] },
      });
      const recovered = (await rt.audit(victim!.id)).find(
        (e) => e.eventType === 'WORKFLOW_RECOVERED',
      );
      expect(recovered?.eventData).toMatchObject({ previous_worker: 'doomed', worker: 'survivor' });
      expect(await rt.get(idle.id)).toMatchObject({ status: 'ACTIVE', currentStep: 'two' });
      await crashing.close().catch(() => undefined);
    });

    it('keeps a slow step’s heartbeat fresh, so a step longer than the zombie threshold is not recovered', async () => {
      // real time: the pulse runs on timers
      const owner = engineFor(handle, {
        clock: systemClock,
        workerId: 'slow-owner',
        heartbeatIntervalMs: 100,
      });
      const scanner = engineFor(handle, { clock: systemClock, workerId: 'scanner' });
      try {
        const def = await definition(`
workflow_type: slow_one
automate_next: true
steps:
  - { name: nap, type: STANDARD, function: steps.slow }
  - { name: after, type: STANDARD, function: steps.mark }
`);
        // the step outlasts the zombie threshold by far; the threshold is ten heartbeats, so a
        // heartbeat delayed by a loaded machine (the whole suite on two cores) is not a zombie
        const running = owner.start(def, { sleep_ms: 2500 });
        let recovered = 0;
        const until = Date.now() + 2300;
        while (Date.now() < until) {
          await new Promise((r) => setTimeout(r, 150));
          recovered += (await scanner.maintain({ zombieAfterMs: 1000 })).recovered;
        }
        const done = await running;
        expect(recovered).toBe(0);
        expect(done).toMatchObject({ status: 'COMPLETED', state: { slept: ['nap'] } });
        const trail = (await owner.audit(done.id)).map((e) => e.eventType);
        expect(trail).not.toContain('WORKFLOW_RECOVERED');
        expect(trail.filter((e) => e === 'STEP_EXECUTED')).toHaveLength(2);
      } finally {
        await owner.close();
        await scanner.close();
      }
    });

    it('times out a PARALLEL step through its durable timer', async () => {
      const workerless = engineFor(handle, { clock, runTasks: false });
      const def = await definition(`
workflow_type: slow_fan
automate_next: true
steps:
  - name: fan
    type: PARALLEL
    timeout_seconds: 5
    allow_partial_success: true
    tasks:
      - { name: quick, function_path: steps.task_a }
      - { name: never, function_path: steps.task_c }
  - { name: after, type: STANDARD, function: steps.mark }
`);
      const wf = await workerless.start(def);
      expect(wf.status).toBe('PENDING_ASYNC');
      expect((await workerless.maintain()).timeouts).toBe(0);
      clock.advance(5_001);
      expect((await workerless.maintain()).timeouts).toBe(1);
      await workerless.drain();
      const done = await workerless.get(wf.id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: {
          visited: ['after'],
          parallel_failures: { fan: [{ task: 'quick' }, { task: 'never' }] },
        },
      });
      expect(
        String((done.state.parallel_failures as { fan: { error: string }[] }).fan[0]!.error),
      ).toContain('timed out after 5 s');
      await workerless.close();
    });

    const approval = (extra: string) => `
workflow_type: approval_${extra.length}
automate_next: true
steps:
  - { name: reserve, type: STANDARD, function: steps.reserve, compensate_function: steps.unreserve }
  - { name: approve, type: HUMAN_IN_LOOP, function: steps.ask_human, timeout_seconds: 60${extra} }
  - { name: after, type: STANDARD, function: steps.mark }
`;

    it('fails a step whose human input misses its deadline, rolling back the saga', async () => {
      const wf = await rt.start(await definition(approval('')));
      expect(wf.status).toBe('WAITING_HUMAN_INPUT');
      clock.advance(59_000);
      expect((await rt.maintain()).timeouts).toBe(0);
      clock.advance(1_001);
      expect((await rt.maintain()).timeouts).toBe(1);
      await rt.drain();
      const done = await rt.get(wf.id);
      expect(done.status).toBe('FAILED_ROLLED_BACK');
      const failed = (await rt.audit(wf.id)).find((e) => e.eventType === 'STEP_FAILED');
      expect(failed).toMatchObject({
        stepName: 'approve',
        eventData: { error: { code: 'HUMAN_INPUT_TIMEOUT' } },
      });
      // fired once: a later pass finds nothing, and a late answer is refused
      clock.advance(60_000);
      expect((await rt.maintain()).timeouts).toBe(0);
      await expect(rt.resume(wf.id, { approved: true })).rejects.toThrow(/not WAITING_HUMAN_INPUT/);
    });

    it('resumes with timeout_input when on_timeout is resume', async () => {
      const def = await definition(
        approval(', on_timeout: resume, timeout_input: { approved: true, by: deadline }'),
      );
      const wf = await rt.start(def);
      clock.advance(60_001);
      expect((await rt.maintain()).timeouts).toBe(1);
      await rt.drain();
      const done = await rt.get(wf.id);
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: { approved_by: 'deadline', human_input_timed_out: true, visited: ['after'] },
      });
      const resumed = (await rt.audit(wf.id)).find((e) => e.eventType === 'WORKFLOW_RESUMED');
      expect(resumed?.eventData).toEqual({ reason: 'human_input_timeout' });
    });

    it('cancels the deadline when the human answers in time', async () => {
      const wf = await rt.start(await definition(approval('')));
      clock.advance(30_000);
      expect(await rt.resume(wf.id, { approved: true, by: 'ana' })).toMatchObject({
        status: 'COMPLETED',
        state: { approved_by: 'ana' },
      });
      clock.advance(60_000);
      expect((await rt.maintain()).timeouts).toBe(0);
      expect((await rt.get(wf.id)).status).toBe('COMPLETED');
    });

    it('fires a cron schedule once per tick, with two schedulers, catching up a bounded number of missed ticks', async () => {
      rt.registry.register(
        await definition(`
workflow_type: nightly
automate_next: true
steps:
  - { name: run, type: STANDARD, function: steps.mark }
`),
      );
      await rt.start(
        await definition(`
workflow_type: registrar
automate_next: true
steps:
  - { name: register, type: CRON_SCHEDULE, schedule_name: every-five, cron_expression: "*/5 * * * *", target_workflow_type: nightly, initial_data_template: { source: cron } }
`),
      );
      const second = engineFor(handle, { clock, registry: rt.registry, workerId: 'scheduler-2' });
      clock.advance(11 * 60_000); // ticks at 00:05 and 00:10 are due
      const reports = await Promise.all([
        rt.maintain({ cronCatchUp: 5 }),
        second.maintain({ cronCatchUp: 5 }),
      ]);
      await rt.drain();
      await second.drain();
      expect(reports[0].scheduled + reports[1].scheduled).toBe(2);
      let runs = await rt.list({ workflowType: 'nightly' });
      expect(runs.map((w) => w.state.scheduled_for).sort()).toEqual([
        '2026-01-01T00:05:00.000Z',
        '2026-01-01T00:10:00.000Z',
      ]);
      expect(runs.every((w) => w.status === 'COMPLETED' && w.state.source === 'cron')).toBe(true);
      expect((await rt.maintain()).scheduled).toBe(0);

      clock.advance(2 * 60 * 60_000); // two hours of downtime: 24 missed ticks
      expect((await rt.maintain({ cronCatchUp: 3 })).scheduled).toBe(3);
      runs = await rt.list({ workflowType: 'nightly' });
      expect(runs).toHaveLength(5);
      await second.close();
    });
  });
}

const worker = fileURLToPath(new URL('../support/crashWorker.ts', import.meta.url));
for (const dialect of DIALECTS.filter((d) => d.name !== 'pglite')) {
  describe(`zombie recovery across processes on ${dialect.name}`, () => {
    it('resumes a workflow whose owner process was SIGKILLed between steps', async () => {
      const handle = await openWithSchema(dialect);
      const dir = mkdtempSync(join(tmpdir(), 'saffron-zombie-'));
      try {
        const rt = engineFor(handle, { clock: systemClock, workerId: 'rescuer' });
        const wf = await rt.start(
          await definition(`
workflow_type: journaled
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.journal }
  - { name: two, type: STANDARD, function: steps.journal }
  - { name: three, type: STANDARD, function: steps.journal }
`),
          { journal: join(dir, 'j.log') },
          { run: false },
        );
        const location =
          dialect.name === 'sqlite'
            ? handle.location
            : (() => {
                const url = new URL(process.env.DATABASE_URL!);
                url.searchParams.set('options', `-c search_path=${handle.location}`);
                return url.toString();
              })();
        const signal = await new Promise<string | null>((resolve) =>
          execFile(
            process.execPath,
            ['--import', 'tsx', worker, location, wf.id, 'after-commit', 'one'],
            { timeout: 60_000 },
            (error) => resolve((error as { signal?: string } | null)?.signal ?? null),
          ),
        );
        expect(signal).toBe('SIGKILL');
        expect((await rt.get(wf.id)).state.done).toEqual(['one']);
        const report = await rt.maintain({ zombieAfterMs: 0 });
        expect(report.recovered).toBe(1);
        await rt.drain();
        expect(await rt.get(wf.id)).toMatchObject({
          status: 'COMPLETED',
          state: { done: ['one', 'two', 'three'] },
        });
        await rt.close();
      } finally {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
