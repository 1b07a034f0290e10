/**
 * The declarative schema model: the one definition of every Saffron table.
 *
 * Why a model instead of DDL strings: the core workflow tables live in two databases
 * (PostgreSQL in the cloud, SQLite on the edge) with the spec's type mapping, and
 * `saffron db validate` must compare a live database against what the code expects.
 * Both need the schema as data. Edge DDL is rendered from this model at start-up; cloud
 * migrations are frozen SQL (never edited once shipped), and a test proves that applying
 * every migration yields exactly this model, so the two cannot drift apart unnoticed.
 */

/** Logical column types; each renders to a PostgreSQL type and a SQLite type (spec type mapping). */
export const COLUMN_TYPES = [
  'uuid',
  'varchar',
  'text',
  'integer',
  'bigint',
  'serial',
  'bigserial',
  'double',
  'boolean',
  'jsonb',
  'timestamptz',
  'timestamp',
  'bytea',
  'tsvector',
] as const;
/** One of {@link COLUMN_TYPES}. */
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** Which databases hold a table: `core` tables exist in both tiers with one shared definition. */
export const TABLE_TIERS = ['core', 'cloud', 'edge'] as const;
/** One of {@link TABLE_TIERS}. */
export type TableTier = (typeof TABLE_TIERS)[number];

/** What happens to child rows when the parent row is deleted. */
export type OnDelete = 'CASCADE' | 'SET NULL' | 'RESTRICT';

/** A column default, rendered per dialect. */
export type ColumnDefault =
  | { kind: 'now' }
  | { kind: 'json'; value: unknown }
  | { kind: 'value'; value: string | number | boolean };

/** A foreign key held by one column. */
export interface ColumnReference {
  table: string;
  column: string;
  onDelete: OnDelete;
}

/** One column of a table. */
export interface ColumnDef {
  name: string;
  type: ColumnType;
  /** Maximum length, for `varchar`. */
  length?: number;
  nullable: boolean;
  primaryKey: boolean;
  unique: boolean;
  default?: ColumnDefault;
  references?: ColumnReference;
  /** Closed set of allowed values: rendered as a named CHECK constraint in both databases. */
  check?: readonly (string | number)[];
  /** PostgreSQL-only generated expression (`GENERATED ALWAYS AS (…) STORED`). */
  generated?: string;
}

/** A secondary index. */
export interface IndexDef {
  name: string;
  columns: readonly { name: string; desc?: boolean }[];
  unique?: boolean;
  /** PostgreSQL access method when not btree (e.g. `gin`); such indexes are cloud-only. */
  using?: 'gin';
  /**
   * PostgreSQL storage parameters of the index (`WITH (…)`), e.g. a GIN index's
   * `gin_pending_list_limit` in kB; SQLite has none.
   */
  storage?: Readonly<Record<string, number>>;
  /**
   * Partial index predicate, written so both databases read it the same
   * (`status = 'PENDING'`): only rows it holds for are indexed.
   */
  where?: string;
}

/** A table of the model. */
export interface TableDef {
  name: string;
  tier: TableTier;
  /** What the table is for, one line. */
  purpose: string;
  columns: readonly ColumnDef[];
  /** Composite primary key, when no single column is the key. */
  primaryKey?: readonly string[];
  /** Composite unique constraints. */
  uniques?: readonly (readonly string[])[];
  indexes: readonly IndexDef[];
}

/** The name of the CHECK constraint of a column with a closed set of values. */
export function checkConstraintName(table: string, column: string): string {
  return `${table}_${column}_check`;
}
