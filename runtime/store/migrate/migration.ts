/**
 * The migration contract. A cloud migration is a numbered, frozen list of SQL statements:
 * once shipped it is never edited (a test pins each one's checksum), and the id of the last
 * one applied is the single row of `alembic_version` (spec: Migration tracking).
 */
import { createHash } from 'node:crypto';

/** One cloud migration. */
export interface Migration {
  /** Sortable id, `NNNN_name`, at most 32 characters (alembic_version.version_num). */
  readonly id: string;
  /** What it changes, one line. */
  readonly description: string;
  /** Statements run in order inside one transaction. */
  readonly statements: readonly string[];
}

/** SHA-256 of a migration's statements: what the immutability test pins. */
export function migrationChecksum(migration: Migration): string {
  const hash = createHash('sha256');
  for (const statement of migration.statements) hash.update(statement).update('\0');
  return hash.digest('hex');
}
