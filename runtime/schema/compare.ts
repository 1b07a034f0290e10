/**
 * Compares an expected schema with a live one and lists every difference in words an
 * operator can act on ("column tasks.status: type integer, expected character varying(50)").
 */
import type { SchemaSnapshot, SchemaTable } from './live.js';

/** One difference between the model and the database. */
export interface SchemaDrift {
  table: string;
  kind:
    | 'missing-table'
    | 'missing-column'
    | 'extra-column'
    | 'column-type'
    | 'nullability'
    | 'primary-key'
    | 'foreign-key'
    | 'unique'
    | 'index'
    | 'check';
  /** Human-readable description. */
  message: string;
}

const key = (values: readonly string[]) => values.join(',');

function compareSets(
  table: string,
  kind: SchemaDrift['kind'],
  label: string,
  expected: readonly string[],
  actual: readonly string[],
): SchemaDrift[] {
  const drift: SchemaDrift[] = [];
  const a = new Set(actual);
  const e = new Set(expected);
  for (const item of expected)
    if (!a.has(item)) drift.push({ table, kind, message: `missing ${label} ${item}` });
  for (const item of actual)
    if (!e.has(item)) drift.push({ table, kind, message: `unexpected ${label} ${item}` });
  return drift;
}

function compareTable(expected: SchemaTable, actual: SchemaTable): SchemaDrift[] {
  const t = expected.name;
  const drift: SchemaDrift[] = [];
  const live = new Map(actual.columns.map((c) => [c.name, c]));
  for (const column of expected.columns) {
    const found = live.get(column.name);
    if (!found) {
      drift.push({
        table: t,
        kind: 'missing-column',
        message: `column ${t}.${column.name} is missing (expected ${column.type}${column.nullable ? '' : ' NOT NULL'})`,
      });
      continue;
    }
    if (found.type !== column.type) {
      drift.push({
        table: t,
        kind: 'column-type',
        message: `column ${t}.${column.name}: type ${found.type}, expected ${column.type}`,
      });
    }
    if (found.nullable !== column.nullable) {
      drift.push({
        table: t,
        kind: 'nullability',
        message: `column ${t}.${column.name}: ${found.nullable ? 'nullable' : 'NOT NULL'}, expected ${column.nullable ? 'nullable' : 'NOT NULL'}`,
      });
    }
  }
  const modelled = new Set(expected.columns.map((c) => c.name));
  for (const column of actual.columns) {
    if (!modelled.has(column.name))
      drift.push({
        table: t,
        kind: 'extra-column',
        message: `column ${t}.${column.name} is not in the schema definition`,
      });
  }
  if (key(expected.primaryKey) !== key(actual.primaryKey)) {
    drift.push({
      table: t,
      kind: 'primary-key',
      message: `primary key (${key(actual.primaryKey)}), expected (${key(expected.primaryKey)})`,
    });
  }
  const fk = (f: SchemaTable['foreignKeys'][number]) =>
    `${f.column} -> ${f.refTable}.${f.refColumn} ON DELETE ${f.onDelete}`;
  drift.push(
    ...compareSets(
      t,
      'foreign-key',
      'foreign key',
      expected.foreignKeys.map(fk),
      actual.foreignKeys.map(fk),
    ),
  );
  drift.push(
    ...compareSets(
      t,
      'unique',
      'unique constraint on',
      expected.uniques.map((u) => `(${key(u)})`),
      actual.uniques.map((u) => `(${key(u)})`),
    ),
  );
  const idx = (i: SchemaTable['indexes'][number]) =>
    `${i.name} ${i.unique ? 'UNIQUE ' : ''}(${i.columns.join(', ')})${i.storage ? ` WITH (${i.storage.join(', ')})` : ''}${i.where !== undefined ? ` WHERE ${i.where}` : ''}`;
  drift.push(
    ...compareSets(t, 'index', 'index', expected.indexes.map(idx), actual.indexes.map(idx)),
  );
  const check = (c: SchemaTable['checks'][number]) =>
    `${c.name} IN (${[...c.values].sort().join(', ')})`;
  drift.push(
    ...compareSets(t, 'check', 'check', expected.checks.map(check), actual.checks.map(check)),
  );
  return drift;
}

/** Every difference between `expected` and `actual`; tables only in `actual` are ignored. */
export function compareSchemas(expected: SchemaSnapshot, actual: SchemaSnapshot): SchemaDrift[] {
  const drift: SchemaDrift[] = [];
  for (const [name, table] of expected) {
    const live = actual.get(name);
    if (!live)
      drift.push({ table: name, kind: 'missing-table', message: `table ${name} is missing` });
    else drift.push(...compareTable(table, live));
  }
  return drift;
}
