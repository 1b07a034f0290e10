/**
 * `saffron db validate`: compare a live database with the schema model. A cloud store is
 * compared with every cloud table; a SQLite store with the edge tables.
 */
import { compareSchemas, type SchemaDrift } from '../schema/compare.js';
import { expectedSchema } from '../schema/expected.js';
import { CLOUD_SCHEMA, EDGE_SCHEMA } from '../schema/tables.js';
import { translateDriverError } from './errors.js';
import { introspectPostgresSchema } from './postgres/introspectSchema.js';
import { introspectSqliteSchema } from './sqlite/introspectSchema.js';
import type { Store } from './store.js';

/** Result of a schema validation. */
export interface SchemaValidation {
  ok: boolean;
  tablesChecked: number;
  drift: SchemaDrift[];
}

/** Compare the store's live schema with the model for its tier. */
export async function validateSchema(store: Store): Promise<SchemaValidation> {
  const sqlite = store.dialect === 'sqlite';
  const tables = sqlite ? EDGE_SCHEMA : CLOUD_SCHEMA;
  try {
    const live = sqlite
      ? await introspectSqliteSchema(store)
      : await introspectPostgresSchema(store);
    const drift = compareSchemas(expectedSchema(tables, sqlite ? 'sqlite' : 'postgres'), live);
    return { ok: drift.length === 0, tablesChecked: tables.length, drift };
  } catch (error) {
    throw translateDriverError(error, 'read the database schema');
  }
}
