/**
 * Applies pending cloud migrations, each in its own transaction under an advisory lock so
 * two `saffron db init` runs (or two gateway nodes starting at once) cannot apply the same
 * migration twice. Returns one result per migration (Kysely's migrator does the same)
 * instead of throwing halfway with nothing to show.
 */
import { sql } from 'kysely';
import { SaffronError } from '../../errors.js';
import { translateDriverError } from '../errors.js';
import type { Store, StoreHandle } from '../store.js';
import type { Migration } from './migration.js';

/** Outcome of one migration in a run. */
export interface MigrationResult {
  id: string;
  status: 'applied' | 'skipped' | 'failed' | 'not-run';
  error?: SaffronError;
  durationMs?: number;
}

/** Progress events, for a progress bar. */
export type MigrationProgress =
  | { kind: 'plan'; pending: readonly string[]; current: string | null }
  | { kind: 'applied'; id: string; index: number; total: number; durationMs: number };

/** Raised when the database is at a version this code does not know (a newer release). */
export class UnknownMigrationError extends SaffronError {
  override readonly name = 'UnknownMigrationError';
  constructor(version: string) {
    super(
      'MIGRATION_UNKNOWN_VERSION',
      `the database is at migration '${version}', which this version of Saffron does not know; upgrade Saffron`,
      { details: { version } },
    );
  }
}

/** Raised when a migration fails; earlier migrations in the run stay applied. */
export class MigrationFailedError extends SaffronError {
  override readonly name = 'MigrationFailedError';
  constructor(id: string, cause: unknown) {
    super('MIGRATION_FAILED', `migration ${id} failed: ${(cause as Error).message}`, { cause });
  }
}

const LOCK_KEY = 7_406_263_184; // arbitrary constant: "saffron migrations" advisory lock

async function ensureVersionTable(handle: StoreHandle): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) PRIMARY KEY NOT NULL)`.execute(
    handle.db,
  );
}

/** The id of the last applied migration, or null on an empty database. */
export async function currentMigration(handle: StoreHandle): Promise<string | null> {
  const exists = await sql<{ present: boolean }>`
    SELECT to_regclass('alembic_version') IS NOT NULL AS present`.execute(handle.db);
  if (exists.rows[0]?.present !== true) return null;
  const rows = await sql<{ version_num: string }>`SELECT version_num FROM alembic_version`.execute(
    handle.db,
  );
  return rows.rows[0]?.version_num ?? null;
}

function pendingAfter(migrations: readonly Migration[], current: string | null): Migration[] {
  if (current === null) return [...migrations];
  const index = migrations.findIndex((m) => m.id === current);
  if (index < 0) throw new UnknownMigrationError(current);
  return migrations.slice(index + 1);
}

/** Migrations not yet applied to the store. */
export async function pendingMigrations(
  store: Store,
  migrations: readonly Migration[],
): Promise<Migration[]> {
  return pendingAfter(migrations, await currentMigration(store));
}

/**
 * Apply every pending migration in order. Re-running is a no-op. Throws only for an unknown
 * database version; a failing migration is reported in the results (and stops the run).
 */
export async function migrate(
  store: Store,
  migrations: readonly Migration[],
  onProgress: (event: MigrationProgress) => void = () => {},
): Promise<MigrationResult[]> {
  if (store.dialect === 'sqlite') {
    throw new SaffronError(
      'MIGRATION_DIALECT',
      'SQLite (edge) databases have no migrations; their schema is created at start-up',
    );
  }
  await ensureVersionTable(store);
  const current = await currentMigration(store);
  const pending = pendingAfter(migrations, current);
  onProgress({ kind: 'plan', pending: pending.map((m) => m.id), current });
  const results: MigrationResult[] = pending.map((m) => ({ id: m.id, status: 'not-run' }));
  for (const [index, migration] of pending.entries()) {
    const result = results[index]!;
    const started = performance.now();
    try {
      const applied = await store.transaction(async (tx) => {
        await sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`.execute(tx.db);
        const now = await currentMigration(tx);
        if (pendingAfter(migrations, now)[0]?.id !== migration.id) return false;
        for (const statement of migration.statements) await sql.raw(statement).execute(tx.db);
        await sql`DELETE FROM alembic_version`.execute(tx.db);
        await sql`INSERT INTO alembic_version (version_num) VALUES (${migration.id})`.execute(
          tx.db,
        );
        return true;
      });
      result.status = applied ? 'applied' : 'skipped';
      result.durationMs = performance.now() - started;
      onProgress({
        kind: 'applied',
        id: migration.id,
        index,
        total: pending.length,
        durationMs: result.durationMs,
      });
    } catch (error) {
      result.status = 'failed';
      result.error = new MigrationFailedError(
        migration.id,
        translateDriverError(error, migration.id),
      );
      break;
    }
  }
  return results;
}
