/**
 * Where the engine commands keep their workflows: the SQLite file ./.saffron/saffron.db of
 * the working directory by default (created with its edge schema on first use), embedded
 * PGlite with `--db pglite:DIR`, and PostgreSQL (migrated on first use, so an empty
 * database works) with `--db postgres://…` or DATABASE_URL when a server is configured.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { adminQuery } from '../support/stores.js';
import {
  loansDir,
  loanYaml,
  payment,
  paymentYaml,
  reviewLoan,
  workflowOf,
} from './engineHelpers.js';

const databaseUrl = process.env.DATABASE_URL;
const dir = mkdtempSync(join(tmpdir(), 'saffron-engine-stores-'));
const schema = `saffron_cli_engine_${process.pid}`;

const admin = adminQuery;

beforeAll(async () => {
  if (databaseUrl) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
});
afterAll(async () => {
  if (databaseUrl) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  rmSync(dir, { recursive: true, force: true });
});

describe('engine commands: the default database', () => {
  it('creates ./.saffron/saffron.db in the working directory, not the cloud PGlite', async () => {
    const cwd = join(dir, 'workstation');
    mkdirSync(cwd);
    const run = await runCli(['run', paymentYaml, '--data', payment(1250), '--json'], { cwd });
    expect(run.code, run.stderr).toBe(0);
    const { id } = workflowOf(run);
    expect(existsSync(join(cwd, '.saffron/saffron.db'))).toBe(true);
    expect(existsSync(join(cwd, '.saffron/cloud'))).toBe(false);
    const shown = await runCli(['show', id, '--json'], { cwd });
    expect(shown.code, shown.stderr).toBe(0);
    expect(workflowOf(shown).status).toBe('COMPLETED');

    // the edge schema is what `db validate` expects of a SQLite file
    const valid = await runCli(['db', 'validate', '--db', '.saffron/saffron.db'], { cwd });
    expect(valid.code, valid.stdout).toBe(0);
  });

  it('says which default database it opened, that it just created it, and names it in WORKFLOW_NOT_FOUND', async () => {
    const home = join(dir, 'home');
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(home);
    mkdirSync(elsewhere);
    const file = (cwd: string) => `sqlite:${join(cwd, '.saffron/saffron.db')}`;
    const hint = 'the default in the working directory; --db or DATABASE_URL opens another';

    const run = await runCli(['run', loanYaml, '--data', reviewLoan, '--json'], { cwd: home });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(
      `saffron: database ${file(home)} (did not exist: created it, empty), ${hint}\n`,
    );
    const { id } = workflowOf(run);
    const shown = await runCli(['show', id, '--json'], { cwd: home });
    expect(shown.stderr).toBe(`saffron: database ${file(home)}, ${hint}\n`);

    // the same resume from another folder opens another (new, empty) database, and says so
    const lost = await runCli(['resume', id, '--input', '{"decision":"approve"}'], {
      cwd: elsewhere,
    });
    expect(lost.code).toBe(1);
    const created = `database ${file(elsewhere)} (did not exist: created it, empty), ${hint}`;
    expect(lost.stderr).toBe(
      `saffron: ${created}\n` +
        `saffron: error: WORKFLOW_NOT_FOUND: workflow ${id} does not exist in ${created}\n`,
    );
  });

  it('uses DATABASE_URL when no --db is given, and --database-url as an alias', async () => {
    const cwd = join(dir, 'env');
    mkdirSync(cwd);
    const env = { DATABASE_URL: join(cwd, 'from-env.db') };
    const run = await runCli(['run', paymentYaml, '--data', payment(100), '--json'], { cwd, env });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(env.DATABASE_URL)).toBe(true);
    expect(existsSync(join(cwd, '.saffron'))).toBe(false);
    const listed = await runCli(['list', '--database-url', 'from-env.db', '--json'], { cwd });
    const workflows = (JSON.parse(listed.stdout) as { workflows: { id: string }[] }).workflows;
    expect(workflows.map((w) => w.id)).toEqual([workflowOf(run).id]);
  });
});

const targets: { name: string; location: () => string }[] = [
  { name: 'pglite', location: () => `pglite:${join(dir, 'pglite')}` },
];
if (databaseUrl)
  targets.unshift({
    name: 'postgres',
    location: () => {
      const url = new URL(databaseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      return url.toString();
    },
  });

for (const target of targets) {
  describe(`engine commands on ${target.name}`, () => {
    it('migrates an empty database on first use and runs the loan flow through resume', async () => {
      const db = target.location();
      const run = await runCli(['run', loanYaml, '--data', reviewLoan, '--db', db, '--json'], {
        cwd: dir,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/applying \d+ migration\(s\)/);
      const wf = workflowOf(run);
      expect(wf).toMatchObject({ status: 'WAITING_HUMAN_INPUT', state: { credit_score: 685 } });

      const resumed = await runCli(
        [
          'resume',
          wf.id,
          '--input',
          '{"decision":"approve","reviewer":"kim"}',
          '--steps',
          loansDir,
          '--db',
          db,
          '--json',
        ],
        { cwd: dir },
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toBe('');
      expect(workflowOf(resumed)).toMatchObject({
        status: 'COMPLETED',
        state: { outcome: 'APPROVED' },
      });

      const listed = await runCli(['list', '--db', db, '--status', 'COMPLETED', '--json'], {
        cwd: dir,
      });
      const types = (
        JSON.parse(listed.stdout) as { workflows: { workflow_type: string }[] }
      ).workflows
        .map((w) => w.workflow_type)
        .sort();
      expect(types).toEqual(['credit_check', 'loan_application']);

      const valid = await runCli(['db', 'validate', '--db', db], { cwd: dir });
      expect(valid.code, valid.stdout).toBe(0);
    });
  });
}
