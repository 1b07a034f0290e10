/**
 * What a database built from the model must look like, in the normalized form of live.ts,
 * for PostgreSQL/PGlite or SQLite.
 */
import {
  normalizePredicate,
  storageParameters,
  type SchemaSnapshot,
  type SchemaTable,
} from './live.js';
import { checkConstraintName, type ColumnDef, type TableDef } from './model.js';
import { sqliteType } from './render/sqlite.js';

/** The dialect families that differ in reported types. */
export type SchemaFamily = 'postgres' | 'sqlite';

function postgresReportedType(column: ColumnDef): string {
  switch (column.type) {
    case 'varchar':
      return `character varying(${column.length ?? 255})`;
    case 'serial':
      return 'integer';
    case 'bigserial':
      return 'bigint';
    case 'double':
      return 'double precision';
    case 'timestamptz':
      return 'timestamp with time zone';
    case 'timestamp':
      return 'timestamp without time zone';
    default:
      return column.type;
  }
}

function expectedTable(table: TableDef, family: SchemaFamily): SchemaTable {
  const columns = table.columns.filter((c) => family === 'postgres' || sqliteType(c) !== undefined);
  const pk = table.primaryKey ?? columns.filter((c) => c.primaryKey).map((c) => c.name);
  return {
    name: table.name,
    columns: columns.map((c) => ({
      name: c.name,
      type: family === 'postgres' ? postgresReportedType(c) : sqliteType(c)!.toLowerCase(),
      // SQLite reports an INTEGER PRIMARY KEY (rowid alias) as nullable though it never is.
      nullable: family === 'sqlite' && c.type.endsWith('serial') ? true : c.nullable,
    })),
    primaryKey: [...pk],
    foreignKeys: columns
      .filter((c) => c.references !== undefined)
      .map((c) => ({
        column: c.name,
        refTable: c.references!.table,
        refColumn: c.references!.column,
        onDelete: c.references!.onDelete,
      })),
    uniques: [
      ...columns.filter((c) => c.unique).map((c) => [c.name]),
      ...(table.uniques ?? []).map((u) => [...u]),
    ],
    indexes: table.indexes
      .filter((i) => family === 'postgres' || i.using === undefined)
      .map((i) => ({
        name: i.name,
        columns: i.columns.map((c) => (c.desc ? `${c.name} desc` : c.name)),
        unique: i.unique ?? false,
        ...(i.where !== undefined ? { where: normalizePredicate(i.where) } : {}),
        ...(family === 'postgres' && i.storage ? { storage: storageParameters(i.storage) } : {}),
      })),
    checks: columns
      .filter((c) => c.check !== undefined)
      .map((c) => ({
        name: checkConstraintName(table.name, c.name),
        values: c.check!.map(String),
      })),
  };
}

/** The expected snapshot of `tables` in a database of the given family. */
export function expectedSchema(tables: readonly TableDef[], family: SchemaFamily): SchemaSnapshot {
  return new Map(tables.map((t) => [t.name, expectedTable(t, family)]));
}
