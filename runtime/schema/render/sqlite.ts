/**
 * Renders the schema model as SQLite DDL with the spec's type mapping (UUID, JSONB and
 * TIMESTAMPTZ as TEXT, BOOLEAN as INTEGER 0/1, SERIAL as INTEGER PRIMARY KEY AUTOINCREMENT;
 * TSVECTOR columns and GIN indexes are cloud-only and left out). Statements use
 * `IF NOT EXISTS`: the edge creates its tables at start-up, with no migration step.
 */
import type { ColumnDef, TableDef } from '../model.js';
import { constraintClauses, whereClause } from './clauses.js';
import { quoteLiteral } from './quote.js';

/** SQLite declared type of a column, or undefined when the column is cloud-only. */
export function sqliteType(column: ColumnDef): string | undefined {
  switch (column.type) {
    case 'uuid':
    case 'varchar':
    case 'text':
    case 'jsonb':
    case 'timestamptz':
    case 'timestamp':
      return 'TEXT';
    case 'integer':
    case 'bigint':
    case 'serial':
    case 'bigserial':
    case 'boolean':
      return 'INTEGER';
    case 'double':
      return 'REAL';
    case 'bytea':
      return 'BLOB';
    case 'tsvector':
      return undefined;
    default: {
      const never: never = column.type;
      throw new Error(`unknown column type ${String(never)}`);
    }
  }
}

/** SQL expression for the current time as ISO 8601 text with milliseconds. */
export const SQLITE_NOW = "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))";

function sqliteDefault(column: ColumnDef): string | undefined {
  const d = column.default;
  if (d === undefined) return undefined;
  switch (d.kind) {
    case 'now':
      return SQLITE_NOW;
    case 'json':
      return quoteLiteral(JSON.stringify(d.value));
    case 'value':
      if (typeof d.value === 'boolean') return d.value ? '1' : '0';
      return typeof d.value === 'string' ? quoteLiteral(d.value) : String(d.value);
  }
}

function columnSql(table: TableDef, column: ColumnDef, type: string): string {
  const parts = [column.name, type];
  const single = column.primaryKey && table.primaryKey === undefined;
  if (single && column.type.endsWith('serial')) parts.push('PRIMARY KEY AUTOINCREMENT');
  else if (single) parts.push('PRIMARY KEY NOT NULL');
  else if (!column.nullable) parts.push('NOT NULL');
  const def = sqliteDefault(column);
  if (def !== undefined) parts.push(`DEFAULT ${def}`);
  parts.push(...constraintClauses(table, column));
  return parts.join(' ');
}

/** `CREATE TABLE IF NOT EXISTS` and `CREATE INDEX IF NOT EXISTS` statements for one table. */
export function sqliteTableStatements(table: TableDef): string[] {
  const lines: string[] = [];
  for (const c of table.columns) {
    const type = sqliteType(c);
    if (type !== undefined) lines.push(`  ${columnSql(table, c, type)}`);
  }
  if (table.primaryKey) lines.push(`  PRIMARY KEY (${table.primaryKey.join(', ')})`);
  for (const unique of table.uniques ?? []) lines.push(`  UNIQUE (${unique.join(', ')})`);
  const statements = [`CREATE TABLE IF NOT EXISTS ${table.name} (\n${lines.join(',\n')}\n)`];
  for (const idx of table.indexes) {
    if (idx.using !== undefined) continue;
    const cols = idx.columns.map((c) => `${c.name}${c.desc ? ' DESC' : ''}`).join(', ');
    statements.push(
      `CREATE ${idx.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${idx.name} ON ${table.name} (${cols})${whereClause(idx)}`,
    );
  }
  return statements;
}

/** Every statement that creates the given tables, in order. */
export function sqliteSchemaStatements(tables: readonly TableDef[]): string[] {
  return tables.flatMap(sqliteTableStatements);
}
