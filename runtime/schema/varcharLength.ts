/**
 * The size of a `varchar` column, read from the model. Validation that guards a sized column
 * takes its limit from here rather than repeating the number, so a value the validator
 * accepts always fits the column (a longer one is refused by PostgreSQL as an error the
 * caller cannot act on).
 */
import { CLOUD_SCHEMA, EDGE_SCHEMA } from './tables.js';

/** The declared length of the `varchar` column `table.column` (cloud or edge schema). */
export function varcharLength(table: string, column: string): number {
  const def = [...CLOUD_SCHEMA, ...EDGE_SCHEMA]
    .find((t) => t.name === table)
    ?.columns.find((c) => c.name === column);
  if (def?.type !== 'varchar' || def.length === undefined)
    throw new Error(`${table}.${column} is not a sized varchar column of the schema model`);
  return def.length;
}
