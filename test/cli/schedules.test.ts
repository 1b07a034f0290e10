/**
 * `saffron schedules list | remove` on every engine dialect: a CRON_SCHEDULE step registers a
 * schedule, `list` shows it (and when it last fired), `remove` deletes it so maintenance no
 * longer fires it; an unknown name is exit 1 with SCHEDULE_NOT_FOUND.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkflowRegistry } from '../../actors/index.js';
import { loadDefinitionFile } from '../../runtime/definition/index.js';
import type { Clock } from '../../runtime/index.js';
import { runCli } from '../support/cli.js';
import {
  type CliTarget,
  newTarget,
  statusCounts,
  TARGET_DIALECTS,
  workerRuntime,
  writeFixtures,
} from './queueHelpers.js';

const dir = mkdtempSync(join(tmpdir(), 'saffron-schedules-'));
const fixtures = writeFixtures(join(dir, 'flows'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ScheduleJson {
  schedule_name: string;
  cron_expression: string;
  timezone: string;
  target_workflow_type: string;
  initial_data_template: Record<string, unknown>;
  status: string;
  next_run_at: string | null;
  last_run_at: string | null;
  source_workflow_id: string | null;
}

async function listed(target: CliTarget): Promise<ScheduleJson[]> {
  const run = await runCli(['schedules', 'list', '--db', target.location, '--json'], { cwd: dir });
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { schedules: ScheduleJson[] }).schedules;
}

/** One maintenance pass `aheadMs` in the future, as a worker's scheduler runs it. */
async function maintainAt(target: CliTarget, aheadMs: number) {
  const nightly = (await loadDefinitionFile(join(fixtures.dir, 'nightly.yaml'))).definition;
  const clock: Clock = {
    now: () => new Date(Date.now() + aheadMs),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
  const errors: unknown[] = [];
  const report = await target.inspect(async (store) => {
    const scheduler = workerRuntime(store, fixtures.dir, errors, {
      clock,
      registry: createWorkflowRegistry([nightly]),
    });
    try {
      return await scheduler.maintain({ cronCatchUp: 1 });
    } finally {
      await scheduler.close();
    }
  });
  expect(errors).toEqual([]);
  return report;
}

for (const dialect of TARGET_DIALECTS) {
  describe(`saffron schedules on ${dialect}`, { timeout: 120_000 }, () => {
    it('lists what CRON_SCHEDULE registered, and remove stops it firing', async () => {
      const target = await newTarget(dialect, dir);
      try {
        const empty = await runCli(['schedules', 'list', '--db', target.location], { cwd: dir });
        expect(empty.code, empty.stderr).toBe(0);
        expect(empty.stdout).toBe('no schedules\n');

        const registered = await runCli(
          ['run', fixtures.cron, '--data', '{"terminal": "pos-7"}', '--db', target.location],
          { cwd: dir },
        );
        expect(registered.code, registered.stderr).toBe(0);

        const [schedule, ...others] = await listed(target);
        expect(others).toEqual([]);
        expect(schedule).toMatchObject({
          schedule_name: 'settle-pos-7',
          cron_expression: '*/5 * * * *',
          timezone: 'UTC',
          target_workflow_type: 'nightly',
          initial_data_template: { terminal: 'pos-7' },
          status: 'ACTIVE',
          last_run_at: null,
        });
        const next = Date.parse(schedule!.next_run_at!);
        expect(next).toBeGreaterThan(Date.now() - 1000);
        expect(next).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
        expect(new Date(next).getUTCMinutes() % 5).toBe(0);

        // an hour on, the schedule is due: it fires once (catch-up 1) and records the run
        expect(await maintainAt(target, 3_600_000)).toMatchObject({ scheduled: 1 });
        const [fired] = await listed(target);
        expect(fired!.last_run_at).not.toBeNull();
        expect(Date.parse(fired!.next_run_at!)).toBeGreaterThan(Date.now() + 3_600_000 - 1000);

        const table = await runCli(['schedules', 'list', '--db', target.location], {
          cwd: dir,
        });
        const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
        expect(rest).toEqual([]);
        expect(header!.split(/\s{2,}/)).toEqual([
          'NAME',
          'CRON',
          'TARGET',
          'NEXT RUN',
          'LAST RUN',
          'STATUS',
        ]);
        expect(row!.split(/\s{2,}/)).toEqual([
          'settle-pos-7',
          '*/5 * * * *',
          'nightly',
          fired!.next_run_at,
          fired!.last_run_at,
          'ACTIVE',
        ]);

        const removed = await runCli(
          ['schedules', 'remove', 'settle-pos-7', '--db', target.location],
          { cwd: dir },
        );
        expect(removed.code, removed.stderr).toBe(0);
        expect(removed.stdout).toBe('removed schedule settle-pos-7\n');
        expect(await listed(target)).toEqual([]);

        // two hours on, nothing fires any more
        expect(await maintainAt(target, 7_200_000)).toMatchObject({ scheduled: 0 });
        await target.inspect(async (store) => {
          expect(await statusCounts(store, 'nightly')).toEqual({ COMPLETED: 1 });
          const rows = await store.db.selectFrom('scheduled_workflows').select('id').execute();
          expect(rows).toEqual([]);
        });
      } finally {
        await target.drop();
      }
    });
  });
}

describe('saffron schedules remove: an unknown name', () => {
  it('exits 1 with SCHEDULE_NOT_FOUND, as text and as JSON', async () => {
    const target = await newTarget('sqlite', dir);
    const run = await runCli(['schedules', 'remove', 'nope', '--db', target.location], {
      cwd: dir,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      "saffron: error: SCHEDULE_NOT_FOUND: no schedule named 'nope' (`saffron schedules list` shows them)\n",
    );
    const json = await runCli(['schedules', 'remove', 'nope', '--db', target.location, '--json'], {
      cwd: dir,
    });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: false,
      error: {
        code: 'SCHEDULE_NOT_FOUND',
        message: "no schedule named 'nope' (`saffron schedules list` shows them)",
      },
    });
  });

  it('requires a name', async () => {
    const run = await runCli(['schedules', 'remove'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("missing required argument 'name'");
  });
});
