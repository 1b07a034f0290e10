/**
 * Request fields that are stored in a sized column take their length limit from the schema
 * model, not from a number typed again in the route: a route that accepted 255 characters
 * for a VARCHAR(200) column answered 500 when PostgreSQL refused the row.
 */
import { z } from 'zod';
import { varcharLength } from '../runtime/index.js';

/** A non-empty string that fits the `varchar` column `table.column`. */
export function columnString(table: string, column: string): z.ZodString {
  return z.string().min(1).max(varcharLength(table, column));
}
