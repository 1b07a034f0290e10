/** The schema model: every table as data, its DDL renderers, and the drift comparison. */
export {
  checkConstraintName,
  COLUMN_TYPES,
  TABLE_TIERS,
  type ColumnDef,
  type ColumnDefault,
  type ColumnReference,
  type ColumnType,
  type IndexDef,
  type OnDelete,
  type TableDef,
  type TableTier,
} from './model.js';
export { CLOUD_SCHEMA, CLOUD_TABLES, CORE_TABLES, EDGE_SCHEMA, EDGE_TABLES } from './tables.js';
export { postgresSchemaStatements, postgresTableStatements } from './render/postgres.js';
export { sqliteSchemaStatements, sqliteTableStatements } from './render/sqlite.js';
export { compareSchemas, type SchemaDrift } from './compare.js';
export { expectedSchema, type SchemaFamily } from './expected.js';
export type { SchemaSnapshot, SchemaTable } from './live.js';
export { varcharLength } from './varcharLength.js';
