/**
 * Renders the schema model as PostgreSQL DDL. Used to write new migrations (the output is
 * frozen into a migration file) and by tests that build a database straight from the model.
 */
import type { ColumnDef, TableDef } from '../model.js';
import { constraintClauses, whereClause, withClause } from './clauses.js';
import { quoteLiteral } from './quote.js';

/** PostgreSQL type of a column. */
export function postgresType(column: ColumnDef): string {
  switch (column.type) {
    case 'uuid':
      return 'UUID';
    case 'varchar':
      return `VARCHAR(${column.length ?? 255})`;
    case 'text':
      return 'TEXT';
    case 'integer':
      return 'INTEGER';
    case 'bigint':
      return 'BIGINT';
    case 'serial':
      return 'SERIAL';
    case 'bigserial':
      return 'BIGSERIAL';
    case 'double':
      return 'DOUBLE PRECISION';
    case 'boolean':
      return 'BOOLEAN';
    case 'jsonb':
      return 'JSONB';
    case 'timestamptz':
      return 'TIMESTAMPTZ';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'bytea':
      return 'BYTEA';
    case 'tsvector':
      return 'TSVECTOR';
    default: {
      const never: never = column.type;
      throw new Error(`unknown column type ${String(never)}`);
    }
  }
}

function postgresDefault(column: ColumnDef): string | undefined {
  const d = column.default;
  if (d === undefined) return undefined;
  switch (d.kind) {
    case 'now':
      return 'now()';
    case 'json':
      return `${quoteLiteral(JSON.stringify(d.value))}::jsonb`;
    case 'value':
      return typeof d.value === 'string' ? quoteLiteral(d.value) : String(d.value);
  }
}

function columnSql(table: TableDef, column: ColumnDef): string {
  const parts = [column.name, postgresType(column)];
  if (column.generated !== undefined) {
    parts.push(`GENERATED ALWAYS AS (${column.generated}) STORED`);
    return parts.join(' ');
  }
  if (column.primaryKey && table.primaryKey === undefined) parts.push('PRIMARY KEY');
  else if (!column.nullable) parts.push('NOT NULL');
  const def = postgresDefault(column);
  if (def !== undefined) parts.push(`DEFAULT ${def}`);
  parts.push(...constraintClauses(table, column));
  return parts.join(' ');
}

/** `CREATE TABLE` and `CREATE INDEX` statements for one table. */
export function postgresTableStatements(table: TableDef): string[] {
  const lines = table.columns.map((c) => `  ${columnSql(table, c)}`);
  if (table.primaryKey) lines.push(`  PRIMARY KEY (${table.primaryKey.join(', ')})`);
  for (const unique of table.uniques ?? []) lines.push(`  UNIQUE (${unique.join(', ')})`);
  const statements = [`CREATE TABLE ${table.name} (\n${lines.join(',\n')}\n)`];
  for (const idx of table.indexes) {
    const cols = idx.columns.map((c) => `${c.name}${c.desc ? ' DESC' : ''}`).join(', ');
    const using = idx.using ? ` USING ${idx.using}` : '';
    statements.push(
      `CREATE ${idx.unique ? 'UNIQUE ' : ''}INDEX ${idx.name} ON ${table.name}${using} (${cols})${withClause(idx)}${whereClause(idx)}`,
    );
  }
  return statements;
}

/** Every statement that creates the given tables, in order. */
export function postgresSchemaStatements(tables: readonly TableDef[]): string[] {
  return tables.flatMap(postgresTableStatements);
}
