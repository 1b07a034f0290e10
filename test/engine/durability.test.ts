/**
 * Durability: a crash at any fault point of the commit path loses no committed step and
 * repeats at most the step in flight (with the same idempotency key); persisted snapshots
 * restore into a fresh runtime and continue. Simulated in-process on every dialect, and with
 * a real SIGKILL of a child process on SQLite and PostgreSQL.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAULT_POINTS, SimulatedCrash, type FaultPoint } from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, type TestStore } from '../support/stores.js';

const FLOW = `
workflow_type: journaled
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.journal }
  - { name: two, type: STANDARD, function: steps.journal }
  - { name: three, type: STANDARD, function: steps.journal }
`;

const journalLines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');

for (const dialect of DIALECTS) {
  describe(`crash recovery on ${dialect.name}`, () => {
    let handle: TestStore;
    let dir: string;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      dir = mkdtempSync(join(tmpdir(), 'saffron-crash-'));
    });
    afterEach(async () => {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    });

    for (const point of FAULT_POINTS) {
      it(`resumes after a crash at ${point} of step two`, async () => {
        const journal = join(dir, `${point}.log`);
        let armed = true;
        const crashing = engineFor(handle, {
          faults: (at: FaultPoint, where) => {
            if (armed && at === point && where.stepName === 'two') {
              armed = false;
              throw new SimulatedCrash(`crash at ${at}`);
            }
          },
        });
        const def = await definition(FLOW);
        const started = await crashing.start(def, { journal }, { run: false });
        await expect(crashing.runUntilSettled(started.id)).rejects.toBeInstanceOf(SimulatedCrash);

        const afterCrash = await crashing.get(started.id);
        const committedTwo = point === 'after-commit';
        expect(afterCrash.status).toBe('ACTIVE');
        expect(afterCrash.currentStep).toBe(committedTwo ? 'three' : 'two');
        expect(afterCrash.state.done).toEqual(committedTwo ? ['one', 'two'] : ['one']);

        const fresh = engineFor(handle);
        const done = await fresh.runUntilSettled(started.id);
        expect(done.status).toBe('COMPLETED');
        expect(done.state.done).toEqual(['one', 'two', 'three']);
        const lines = journalLines(journal);
        const twos = lines.filter((l) => l.startsWith('two '));
        expect(twos).toHaveLength(point === 'before-commit' ? 2 : 1);
        expect(new Set(twos).size).toBe(1); // a repeat carries the same idempotency key
        expect(lines.filter((l) => l.startsWith('one '))).toHaveLength(1);
        expect(lines.filter((l) => l.startsWith('three '))).toHaveLength(1);
        const executed = (await fresh.audit(started.id))
          .filter((e) => e.eventType === 'STEP_EXECUTED')
          .map((e) => e.stepName);
        expect(executed).toEqual(['one', 'two', 'three']);
        await fresh.close();
      });
    }

    it('restores a waiting workflow from its snapshot in a fresh runtime and continues', async () => {
      const first = engineFor(handle);
      const def = await definition(`
workflow_type: restorable
automate_next: true
steps:
  - { name: before, type: STANDARD, function: steps.mark }
  - { name: review, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: after, type: STANDARD, function: steps.mark }
`);
      const wf = await first.start(def);
      expect(wf.status).toBe('WAITING_HUMAN_INPUT');
      expect(wf.actorSnapshot).toMatchObject({ value: { review: 'waitingHuman' } });
      await first.close();
      const second = engineFor(handle);
      const done = await second.resume(wf.id, { approved: true, by: 'ops' });
      expect(done).toMatchObject({
        status: 'COMPLETED',
        state: { visited: ['before', 'after'], approved_by: 'ops' },
      });
      await second.close();
    });

    it('reports a snapshot that no longer fits its machine as SNAPSHOT_INVALID, not a crash', async () => {
      const rt = engineFor(handle);
      const def = await definition(`
workflow_type: tampered
steps:
  - { name: a, type: STANDARD, function: steps.mark }
  - { name: b, type: STANDARD, function: steps.mark }
`);
      const wf = await rt.start(def);
      const snapshot = {
        ...(wf.actorSnapshot as Record<string, unknown>),
        value: { nowhere: 'ready' },
      };
      await handle.store.db
        .updateTable('workflow_executions')
        .set({ actor_snapshot: JSON.stringify(snapshot) })
        .where('id', '=', wf.id)
        .execute();
      await expect(rt.next(wf.id)).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID' });
      const other = await rt.start(def);
      expect(other.status).toBe('ACTIVE');
      await rt.close();
    });
  });
}

const processDialects = DIALECTS.filter((d) => d.name !== 'pglite');
const worker = fileURLToPath(new URL('../support/crashWorker.ts', import.meta.url));

function runWorker(args: string[]): Promise<{ signal: NodeJS.Signals | null; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', worker, ...args],
      { timeout: 60_000 },
      (error, stdout) => {
        resolve({ signal: (error as { signal?: NodeJS.Signals } | null)?.signal ?? null, stdout });
      },
    );
  });
}

for (const dialect of processDialects) {
  describe(`process kill on ${dialect.name}`, () => {
    for (const point of ['before-commit', 'after-commit'] as const) {
      it(`loses no committed step when the process is SIGKILLed at ${point}`, async () => {
        const handle = await openWithSchema(dialect);
        const dir = mkdtempSync(join(tmpdir(), 'saffron-kill-'));
        try {
          const journal = join(dir, 'journal.log');
          const rt = engineFor(handle);
          const wf = await rt.start(await definition(FLOW), { journal }, { run: false });
          const location =
            dialect.name === 'sqlite'
              ? handle.location
              : (() => {
                  const url = new URL(process.env.DATABASE_URL!);
                  url.searchParams.set('options', `-c search_path=${handle.location}`);
                  return url.toString();
                })();
          const result = await runWorker([location, wf.id, point, 'two']);
          expect(result.signal).toBe('SIGKILL');
          const afterKill = await rt.get(wf.id);
          expect(afterKill.state.done).toEqual(point === 'after-commit' ? ['one', 'two'] : ['one']);
          const done = await rt.runUntilSettled(wf.id);
          expect(done.status).toBe('COMPLETED');
          const twos = journalLines(journal).filter((l) => l.startsWith('two '));
          expect(twos).toHaveLength(point === 'before-commit' ? 2 : 1);
          await rt.close();
        } finally {
          await handle.close();
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });
}
