/**
 * `saffron db init | validate | stats` end to end on every dialect: a fresh database is
 * migrated with progress output, re-running is a no-op, hand-made drift is named, and bad
 * input (unknown flag, unreachable server, unsupported URL) fails with a clear message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { CLOUD_SCHEMA, EDGE_SCHEMA } from '../../runtime/schema/index.js';
import { runCli } from '../support/cli.js';
import { adminQuery } from '../support/stores.js';

const databaseUrl = process.env.DATABASE_URL;
const dir = mkdtempSync(join(tmpdir(), 'saffron-cli-'));
const schema = `saffron_cli_${process.pid}`;

const admin = adminQuery;

/** Each target: how the CLI names it, and how the test drops a column behind its back. */
const targets: { name: string; location: string; dropColumn: () => Promise<void> }[] = [
  {
    name: 'pglite',
    location: `pglite:${join(dir, 'cloud')}`,
    dropColumn: async () => {
      const db = await PGlite.create(join(dir, 'cloud'));
      await db.exec('ALTER TABLE workflow_executions DROP COLUMN owner_id');
      await db.close();
    },
  },
  {
    name: 'sqlite',
    location: join(dir, 'edge.db'),
    dropColumn: () => {
      const db = new Database(join(dir, 'edge.db'));
      db.exec(
        'DROP INDEX idx_workflow_executions_owner; ALTER TABLE workflow_executions DROP COLUMN owner_id',
      );
      db.close();
      return Promise.resolve();
    },
  },
];
if (databaseUrl) {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  targets.unshift({
    name: 'postgres',
    location: url.toString(),
    dropColumn: () => admin(`ALTER TABLE ${schema}.workflow_executions DROP COLUMN owner_id`),
  });
}

beforeAll(async () => {
  if (databaseUrl) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
});
afterAll(async () => {
  if (databaseUrl) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  rmSync(dir, { recursive: true, force: true });
});

for (const target of targets) {
  describe(`saffron db on ${target.name}`, () => {
    it('initializes, is idempotent, validates, reports stats, and names a dropped column', async () => {
      const init = await runCli(['db', 'init', '--db', target.location]);
      expect(init.code, init.stderr).toBe(0);
      if (target.name === 'sqlite') expect(init.stdout).toMatch(/created 14 edge tables/);
      else {
        const last = migrations.at(-1)!.id;
        expect(init.stdout).toContain(`applied ${migrations.length} migration(s) to `);
        expect(init.stdout).toContain(`; now at ${last}`);
        migrations.forEach((m, i) =>
          expect(init.stderr).toContain(`[${i + 1}/${migrations.length}] ${m.id}`),
        );
      }

      const again = await runCli(['db', 'init', '--database-url', target.location, '--json']);
      expect(again.code).toBe(0);
      const body = JSON.parse(again.stdout) as {
        ok: boolean;
        migrations?: unknown[];
        created?: unknown[];
      };
      expect(body.ok).toBe(true);
      expect(body.migrations ?? body.created).toEqual([]);

      const valid = await runCli(['db', 'validate', '--db', target.location]);
      expect(valid.code, valid.stdout).toBe(0);
      const tables = target.name === 'sqlite' ? EDGE_SCHEMA.length : CLOUD_SCHEMA.length;
      expect(valid.stdout).toContain(`matches the definitions (${tables} tables)`);

      const stats = await runCli(['db', 'stats', '--db', target.location, '--json']);
      expect(stats.code).toBe(0);
      const s = JSON.parse(stats.stdout) as { tables: Record<string, number>; sizeBytes: number };
      expect(s.tables.workflow_executions).toBe(0);
      expect(s.sizeBytes).toBeGreaterThan(0);

      await target.dropColumn();
      const drift = await runCli(['db', 'validate', '--db', target.location]);
      expect(drift.code).toBe(1);
      expect(drift.stdout).toContain('column workflow_executions.owner_id is missing');
      const driftJson = await runCli(['db', 'validate', '--db', target.location, '--json']);
      expect(driftJson.code).toBe(1);
      const report = JSON.parse(driftJson.stdout) as {
        ok: boolean;
        drift: { table: string; kind: string }[];
      };
      expect(report.ok).toBe(false);
      expect(report.drift).toContainEqual(
        expect.objectContaining({ table: 'workflow_executions', kind: 'missing-column' }),
      );
    });
  });
}

describe('saffron db bad input', () => {
  it('uses embedded PGlite in SAFFRON_DATA_DIR when no database is named', async () => {
    const dataDir = join(dir, 'default-data');
    const run = await runCli(['db', 'init'], { env: { SAFFRON_DATA_DIR: dataDir } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`pglite:${dataDir}`);
  });

  it('rejects an unknown flag with usage help and exit 2', async () => {
    const run = await runCli(['db', 'init', '--bogus']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--bogus'");
  });

  it('reports an unreachable server and exits 1', async () => {
    const run = await runCli([
      'db',
      'validate',
      '--database-url',
      'postgres://nobody@127.0.0.1:1/none',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/saffron: error: connect to PostgreSQL: .*ECONNREFUSED/);
  });

  it('rejects an unsupported URL scheme and hides passwords', async () => {
    const run = await runCli(['db', 'stats', '--db', 'mysql://admin:hunter2@db/x']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('unsupported database URL scheme');
    expect(run.stderr).not.toContain('hunter2');
  });
});
