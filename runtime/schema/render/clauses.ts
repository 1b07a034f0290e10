/** Column constraint clauses both dialects write the same way. */
import { checkConstraintName, type ColumnDef, type IndexDef, type TableDef } from '../model.js';
import { quoteLiteral } from './quote.js';

/** `UNIQUE`, `REFERENCES … ON DELETE …` and the named CHECK of a column, as present. */
export function constraintClauses(table: TableDef, column: ColumnDef): string[] {
  const clauses: string[] = [];
  if (column.unique) clauses.push('UNIQUE');
  if (column.references) {
    const r = column.references;
    clauses.push(`REFERENCES ${r.table}(${r.column}) ON DELETE ${r.onDelete}`);
  }
  if (column.check) {
    const values = column.check.map((v) => (typeof v === 'string' ? quoteLiteral(v) : String(v)));
    clauses.push(
      `CONSTRAINT ${checkConstraintName(table.name, column.name)} CHECK (${column.name} IN (${values.join(', ')}))`,
    );
  }
  return clauses;
}

/** ` WITH (…)` of an index with PostgreSQL storage parameters, empty without. */
export const withClause = (index: IndexDef): string =>
  index.storage
    ? ` WITH (${Object.entries(index.storage)
        .map(([name, value]) => `${name} = ${value}`)
        .join(', ')})`
    : '';

/** ` WHERE …` of a partial index, empty for a full one. */
export const whereClause = (index: IndexDef): string =>
  index.where !== undefined ? ` WHERE ${index.where}` : '';
