/**
 * Reads the live schema of the current PostgreSQL schema (search_path head) from the catalog,
 * in the normalized form `saffron db validate` compares. Works on PGlite unchanged.
 */
import { sql } from 'kysely';
import {
  normalizePredicate,
  storageParameters,
  type SchemaSnapshot,
  type SchemaTable,
} from '../../schema/live.js';
import type { StoreHandle } from '../store.js';

const ON_DELETE: Record<string, string> = {
  c: 'CASCADE',
  n: 'SET NULL',
  r: 'RESTRICT',
  a: 'NO ACTION',
  d: 'SET DEFAULT',
};

/** The live schema of every table in the current schema. */
export async function introspectPostgresSchema(handle: StoreHandle): Promise<SchemaSnapshot> {
  const db = handle.db;
  const columns = await sql<{
    table_name: string;
    column_name: string;
    type: string;
    nullable: boolean;
  }>`
    SELECT c.relname AS table_name, a.attname AS column_name,
           format_type(a.atttypid, a.atttypmod) AS type, NOT a.attnotnull AS nullable
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
      AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY c.relname, a.attnum`.execute(db);
  const constraints = await sql<{
    table_name: string;
    name: string;
    type: string;
    columns: string[];
    ref_table: string | null;
    ref_columns: string[] | null;
    on_delete: string;
    definition: string;
  }>`
    SELECT c.relname AS table_name, con.conname AS name, con.contype AS type,
           ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i)::text[] AS columns,
           rc.relname AS ref_table,
           ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
                 JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)::text[] AS ref_columns,
           con.confdeltype AS on_delete, pg_get_constraintdef(con.oid) AS definition
    FROM pg_constraint con
    JOIN pg_class c ON c.oid = con.conrelid
    LEFT JOIN pg_class rc ON rc.oid = con.confrelid
    WHERE c.relnamespace = current_schema()::regnamespace AND con.contype IN ('p', 'f', 'u', 'c')
    ORDER BY c.relname, con.conname`.execute(db);
  const indexes = await sql<{
    table_name: string;
    name: string;
    unique: boolean;
    definition: string;
  }>`
    SELECT t.relname AS table_name, i.relname AS name, ix.indisunique AS unique,
           pg_get_indexdef(ix.indexrelid) AS definition
    FROM pg_index ix
    JOIN pg_class i ON i.oid = ix.indexrelid
    JOIN pg_class t ON t.oid = ix.indrelid
    WHERE t.relnamespace = current_schema()::regnamespace
      AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid)
    ORDER BY t.relname, i.relname`.execute(db);

  const snapshot: SchemaSnapshot = new Map();
  const table = (name: string): SchemaTable => {
    let t = snapshot.get(name);
    if (!t) {
      t = {
        name,
        columns: [],
        primaryKey: [],
        foreignKeys: [],
        uniques: [],
        indexes: [],
        checks: [],
      };
      snapshot.set(name, t);
    }
    return t;
  };
  for (const c of columns.rows)
    table(c.table_name).columns.push({ name: c.column_name, type: c.type, nullable: c.nullable });
  for (const c of constraints.rows) {
    const t = table(c.table_name);
    if (c.type === 'p') t.primaryKey = c.columns;
    else if (c.type === 'u') t.uniques.push(c.columns);
    else if (c.type === 'f')
      t.foreignKeys.push({
        column: c.columns[0] ?? '',
        refTable: c.ref_table ?? '',
        refColumn: c.ref_columns?.[0] ?? '',
        onDelete: ON_DELETE[c.on_delete] ?? c.on_delete,
      });
    else
      t.checks.push({
        name: c.name,
        values: [...c.definition.matchAll(/'((?:[^']|'')*)'/g)].map((m) =>
          m[1]!.replaceAll("''", "'"),
        ),
      });
  }
  for (const i of indexes.rows) {
    // `… (columns) [WITH (name='value', …)] [WHERE predicate]`
    const parts = /\((.*?)\)(?: WITH \((.*?)\))?(?: WHERE (.*))?$/.exec(i.definition);
    const list = parts?.[1] ?? '';
    const storage = parts?.[2];
    table(i.table_name).indexes.push({
      name: i.name,
      unique: i.unique,
      columns: list.split(',').map((c) => c.trim().replace(/ DESC$/i, ' desc')),
      ...(storage !== undefined
        ? {
            storage: storageParameters(
              Object.fromEntries(storage.split(', ').map((p) => p.split('=') as [string, string])),
            ),
          }
        : {}),
      ...(parts?.[3] !== undefined ? { where: normalizePredicate(parts[3]) } : {}),
    });
  }
  return snapshot;
}
