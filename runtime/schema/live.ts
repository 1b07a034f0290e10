/**
 * The normalized shape of a schema as `saffron db validate` compares it: both what the model
 * expects (expected.ts) and what a live database holds (store/<dialect>/introspectSchema.ts)
 * are brought to this form, so the comparison itself is dialect-free.
 */

/** One column as compared. */
export interface SchemaColumn {
  name: string;
  /** Dialect type as the database reports it, lower case (`character varying(200)`, `text`). */
  type: string;
  nullable: boolean;
}

/** One foreign key as compared. */
export interface SchemaForeignKey {
  column: string;
  refTable: string;
  refColumn: string;
  onDelete: string;
}

/** One secondary index as compared. */
export interface SchemaIndex {
  name: string;
  /** Columns with ` desc` appended for descending ones. */
  columns: string[];
  unique: boolean;
  /** Partial index predicate, normalized by {@link normalizePredicate}; absent for a full index. */
  where?: string;
  /** PostgreSQL storage parameters as `name=value`, sorted; absent when none are set. */
  storage?: string[];
}

/**
 * A partial index predicate in a form both databases' reports reduce to: PostgreSQL answers
 * `((status)::text = 'PENDING'::text)` for the `status = 'PENDING'` SQLite keeps as written.
 */
export function normalizePredicate(predicate: string): string {
  return predicate
    .replace(/::[a-z_]+(?: varying| precision| with(?:out)? time zone)?(\([\d, ]+\))?/gi, '')
    .replace(/[()]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Storage parameters as compared: `name=value`, sorted. PostgreSQL reports them quoted
 * (`gin_pending_list_limit='256'`); the model gives numbers.
 */
export function storageParameters(parameters: Readonly<Record<string, number | string>>): string[] {
  return Object.entries(parameters)
    .map(([name, value]) => `${name}=${String(value).replace(/^'(.*)'$/, '$1')}`)
    .sort();
}

/** One table as compared. */
export interface SchemaTable {
  name: string;
  columns: SchemaColumn[];
  primaryKey: string[];
  foreignKeys: SchemaForeignKey[];
  /** Unique constraints (including column-level UNIQUE) as column lists. */
  uniques: string[][];
  indexes: SchemaIndex[];
  /** Named CHECK constraints with their allowed values. */
  checks: { name: string; values: string[] }[];
}

/** A whole schema: tables by name. */
export type SchemaSnapshot = Map<string, SchemaTable>;
