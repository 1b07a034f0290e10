/**
 * The schema model, the migrations and the live databases agree, and `validateSchema` names
 * every kind of hand-made drift.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.js';
import { CLOUD_SCHEMA, EDGE_SCHEMA } from '../../runtime/schema/index.js';
import {
  currentMigration,
  ensureEdgeSchema,
  migrate,
  migrationChecksum,
  UnknownMigrationError,
  validateSchema,
} from '../../runtime/store/index.js';
import {
  CLOUD_DIALECTS,
  DIALECTS,
  openWithSchema,
  rawExec,
  type TestStore,
  EDGE_DIALECT,
} from '../support/stores.js';

/** Shipped migrations are frozen: editing one changes its checksum and fails here. */
const SHIPPED: Record<string, string> = {
  '0001_initial': '858f00a08839c184ec6ffba5dba9d9ee073d258097f51c4749afe24766f1224e',
  '0002_wasm_component_description':
    'de299d70adc1a8f5641897287cc2c6fab2982b3b09883a4b9b3a4b398352fb4b',
  '0003_workflow_definitions': '36fd2cc745e6b71a332dc0076e984c75d4a01a841894c907a021a4c7e04334e0',
  '0004_registration_keys': '92997daeadbf4e6bf76763e08227155772955ade77df3b1f4b8bf068886a33ff',
  '0005_device_request_nonces': 'e006a37a01ce3da43fe403688c6bd636bf99b98c378929bc91165fc5e71ba45a',
  '0006_webhook_order_audit_search':
    'b81dbae8c5c47d2b39de9cf71db876f63ded72c556334cd5bfd560978bee07cd',
  '0007_command_risk_levels': '81489aef0a6b77ee3c7ca581e8a63a7435462c70cee74da799573598822443df',
  '0008_task_claim_indexes': '726c8cd1e02e7323af412b9836edb7d24811eb682e9a8f77cb39b064efcd7ca3',
  '0009_metrics_name_index': '9ad8fe1146fa67bd83e77c434b236f212002e0d8dd714f8dbd2f09fb81af56e9',
  '0010_command_type_check': '24a5fe0d41ef713a95ac1ab3692c1d50c964fd8ff1d8dbe8b560cad25facfdb4',
  '0011_default_command_policy': '1a004657e7cc32254dbbfaa207b29c928bfd0688c8a347e37b8f52a9003ffac6',
  '0012_audit_search_pending_list':
    '971ef3d1db1bd6b263670290b041768efb6762cfa6d5ac1180bdc143861606be',
  '0013_open_command_indexes': '5e73d02355ca96da598831842581ad2502aa3812b4bb3b17392a64bbbb7820e0',
};

describe('migrations', () => {
  it('are ordered, unique, short enough for alembic_version and frozen', () => {
    const ids = migrations.map((m) => m.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of migrations) {
      expect(m.id.length).toBeLessThanOrEqual(32);
      expect(m.id).toMatch(/^\d{4}_[a-z0-9_]+$/);
      if (SHIPPED[m.id]) expect(migrationChecksum(m), m.id).toBe(SHIPPED[m.id]);
    }
  });
});

describe('edge schema', () => {
  it('holds the core tables and the edge-only tables, and no cloud-only table', () => {
    const names = EDGE_SCHEMA.map((t) => t.name);
    for (const t of [
      'workflow_executions',
      'workflow_audit_log',
      'workflow_execution_logs',
      'workflow_metrics',
      'workflow_heartbeats',
      'tasks',
      'compensation_log',
    ])
      expect(names).toContain(t);
    for (const t of [
      'saf_pending_transactions',
      'device_config_cache',
      'edge_sync_state',
      'edge_workflow_cache',
      'device_wasm_cache',
    ])
      expect(names).toContain(t);
    expect(names).not.toContain('edge_devices');
  });
});

for (const dialect of DIALECTS) {
  describe(`schema on ${dialect.name}`, () => {
    let handle: TestStore | undefined;
    afterEach(async () => {
      await handle?.close();
      handle = undefined;
    });

    it('matches the model right after creation, and creating it again is a no-op', async () => {
      handle = await openWithSchema(dialect);
      const first = await validateSchema(handle.store);
      expect(first.drift).toEqual([]);
      expect(first.tablesChecked).toBe(
        dialect.name === 'sqlite' ? EDGE_SCHEMA.length : CLOUD_SCHEMA.length,
      );
      if (dialect.name === 'sqlite') expect(await ensureEdgeSchema(handle.store)).toEqual([]);
      else expect(await migrate(handle.store, migrations)).toEqual([]);
      expect((await validateSchema(handle.store)).ok).toBe(true);
    });

    it('names a dropped column, a dropped index, a dropped table and an altered CHECK', async () => {
      handle = await openWithSchema(dialect);
      await rawExec(handle, 'ALTER TABLE workflow_executions DROP COLUMN data_region');
      await rawExec(handle, 'DROP INDEX idx_workflow_executions_owner');
      await rawExec(handle, 'DROP TABLE compensation_log');
      if (dialect.name === 'sqlite') {
        await rawExec(handle, 'ALTER TABLE tasks ADD COLUMN surprise TEXT');
      } else {
        await rawExec(handle, 'ALTER TABLE tasks DROP CONSTRAINT tasks_status_check');
        await rawExec(
          handle,
          "ALTER TABLE tasks ADD CONSTRAINT tasks_status_check CHECK (status IN ('PENDING', 'DONE'))",
        );
        await rawExec(
          handle,
          'ALTER TABLE workflow_heartbeats ALTER COLUMN worker_id DROP NOT NULL',
        );
        await rawExec(
          handle,
          'ALTER TABLE workflow_metrics ALTER COLUMN metric_value TYPE INTEGER',
        );
      }
      const result = await validateSchema(handle.store);
      expect(result.ok).toBe(false);
      const messages = result.drift.map((d) => d.message);
      expect(messages).toContain(
        'column workflow_executions.data_region is missing (expected ' +
          (dialect.name === 'sqlite' ? 'text)' : 'character varying(100))'),
      );
      expect(messages).toContain('missing index idx_workflow_executions_owner (owner_id)');
      expect(messages).toContain('table compensation_log is missing');
      if (dialect.name === 'sqlite') {
        expect(messages).toContain('column tasks.surprise is not in the schema definition');
      } else {
        expect(messages).toContain('unexpected check tasks_status_check IN (DONE, PENDING)');
        expect(messages).toContain(
          'column workflow_heartbeats.worker_id: nullable, expected NOT NULL',
        );
        expect(messages).toContain(
          'column workflow_metrics.metric_value: type integer, expected double precision',
        );
      }
    });

    it('compares the predicate of a partial index', async () => {
      handle = await openWithSchema(dialect);
      await rawExec(handle, 'DROP INDEX idx_tasks_pending_run_after');
      await rawExec(
        handle,
        "CREATE INDEX idx_tasks_pending_run_after ON tasks (run_after) WHERE status = 'CLAIMED'",
      );
      const messages = (await validateSchema(handle.store)).drift.map((d) => d.message);
      expect(messages).toEqual([
        "missing index idx_tasks_pending_run_after (run_after) WHERE status = 'PENDING'",
        "unexpected index idx_tasks_pending_run_after (run_after) WHERE status = 'CLAIMED'",
      ]);
    });

    // storage parameters are PostgreSQL's: SQLite's indexes have none
    it.runIf(dialect !== EDGE_DIALECT)('compares the storage parameters of an index', async () => {
      handle = await openWithSchema(dialect);
      await rawExec(
        handle,
        'ALTER INDEX idx_command_audit_log_search RESET (gin_pending_list_limit)',
      );
      const messages = (await validateSchema(handle.store)).drift.map((d) => d.message);
      expect(messages).toEqual([
        'missing index idx_command_audit_log_search (search_vector) WITH (gin_pending_list_limit=256)',
        'unexpected index idx_command_audit_log_search (search_vector)',
      ]);
    });
  });
}

describe('edge schema upgrade', () => {
  it('drops the indexes earlier versions created and the model no longer has', async () => {
    const handle = await openWithSchema(EDGE_DIALECT);
    try {
      await rawExec(handle, 'CREATE INDEX idx_tasks_status_run_after ON tasks (status, run_after)');
      await rawExec(
        handle,
        'CREATE INDEX idx_workflow_metrics_name ON workflow_metrics (metric_name, recorded_at)',
      );
      expect((await validateSchema(handle.store)).drift.map((d) => d.message)).toEqual([
        'unexpected index idx_workflow_metrics_name (metric_name, recorded_at)',
        'unexpected index idx_tasks_status_run_after (status, run_after)',
      ]);
      expect(await ensureEdgeSchema(handle.store)).toEqual([]);
      expect((await validateSchema(handle.store)).drift).toEqual([]);
    } finally {
      await handle.close();
    }
  });
});

for (const dialect of CLOUD_DIALECTS) {
  describe(`migrator on ${dialect.name}`, () => {
    let handle: TestStore | undefined;
    afterEach(async () => {
      await handle?.close();
      handle = undefined;
    });

    it('records the last migration in alembic_version and reports progress', async () => {
      handle = await dialect.open();
      const events: string[] = [];
      const results = await migrate(handle.store, migrations, (e) =>
        events.push(e.kind === 'plan' ? `plan:${e.pending.length}` : `applied:${e.id}`),
      );
      expect(results.map((r) => r.status)).toEqual(migrations.map(() => 'applied'));
      expect(events).toEqual([
        `plan:${migrations.length}`,
        ...migrations.map((m) => `applied:${m.id}`),
      ]);
      expect(await currentMigration(handle.store)).toBe(migrations.at(-1)!.id);
    });

    it('refuses a device command whose type is outside the closed set', async () => {
      handle = await openWithSchema(dialect);
      await rawExec(handle, "INSERT INTO edge_devices (device_id) VALUES ('check-device')");
      const insert = (type: string) =>
        rawExec(
          handle!,
          `INSERT INTO device_commands (command_id, device_id, command_type) VALUES ('${randomUUID()}', 'check-device', '${type}')`,
        );
      await insert('REBOOT');
      await insert('update_workflow'); // the edge's alias, accepted by the commands API
      await expect(insert('FORMAT_DISK')).rejects.toThrow(/device_commands_command_type_check/);
    });

    it('refuses a database at a version it does not know', async () => {
      handle = await dialect.open();
      await migrate(handle.store, migrations);
      await rawExec(handle, "UPDATE alembic_version SET version_num = '9999_from_the_future'");
      await expect(migrate(handle.store, migrations)).rejects.toBeInstanceOf(UnknownMigrationError);
    });

    it('reports a failing migration and keeps the earlier ones', async () => {
      handle = await dialect.open();
      const broken = [
        ...migrations,
        { id: '9998_broken', description: 'broken', statements: ['CREATE TABLE tasks (id INT)'] },
      ];
      const results = await migrate(handle.store, broken);
      expect(results.at(-1)).toMatchObject({ id: '9998_broken', status: 'failed' });
      expect(results.at(-1)!.error?.code).toBe('MIGRATION_FAILED');
      expect(await currentMigration(handle.store)).toBe(migrations.at(-1)!.id);
    });
  });
}
