/**
 * Reads the live schema of a SQLite database through its PRAGMA table functions, in the
 * normalized form `saffron db validate` compares. CHECK constraints are not exposed by any
 * PRAGMA, so their allowed values are read from the stored CREATE TABLE text.
 */
import { sql } from 'kysely';
import { normalizePredicate, type SchemaSnapshot, type SchemaTable } from '../../schema/live.js';
import type { StoreHandle } from '../store.js';

/** The live schema of every table in the database. */
export async function introspectSqliteSchema(handle: StoreHandle): Promise<SchemaSnapshot> {
  const db = handle.db;
  const tables = await sql<{ name: string; sql: string }>`
    SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`.execute(
    db,
  );
  const snapshot: SchemaSnapshot = new Map();
  for (const { name, sql: ddl } of tables.rows) {
    const t: SchemaTable = {
      name,
      columns: [],
      primaryKey: [],
      foreignKeys: [],
      uniques: [],
      indexes: [],
      checks: [],
    };
    const cols = await sql<{ name: string; type: string; notnull: number; pk: number }>`
      SELECT name, type, "notnull", pk FROM pragma_table_info(${name}) ORDER BY cid`.execute(db);
    for (const c of cols.rows)
      t.columns.push({ name: c.name, type: c.type.toLowerCase(), nullable: c.notnull === 0 });
    t.primaryKey = cols.rows
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name);
    const fks = await sql<{ from: string; table: string; to: string; on_delete: string }>`
      SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(${name})`.execute(db);
    for (const f of fks.rows)
      t.foreignKeys.push({
        column: f.from,
        refTable: f.table,
        refColumn: f.to,
        onDelete: f.on_delete,
      });
    const idx = await sql<{ name: string; unique: number; origin: string; ddl: string | null }>`
      SELECT l.name, l."unique", l.origin, m.sql AS ddl FROM pragma_index_list(${name}) AS l
      LEFT JOIN sqlite_master AS m ON m.type = 'index' AND m.name = l.name`.execute(db);
    for (const i of idx.rows) {
      if (i.origin === 'pk') continue;
      const keys = await sql<{ name: string; desc: number; key: number }>`
        SELECT name, "desc", "key" FROM pragma_index_xinfo(${i.name}) WHERE "key" = 1 ORDER BY seqno`.execute(
        db,
      );
      const columns = keys.rows.map((k) => (k.desc === 1 ? `${k.name} desc` : k.name));
      if (i.origin === 'u') t.uniques.push(columns);
      else {
        const where = i.ddl ? /\sWHERE\s(.*)$/is.exec(i.ddl)?.[1] : undefined;
        t.indexes.push({
          name: i.name,
          unique: i.unique === 1,
          columns,
          ...(where !== undefined ? { where: normalizePredicate(where) } : {}),
        });
      }
    }
    for (const m of ddl.matchAll(
      /CONSTRAINT\s+(\w+)\s+CHECK\s*\(\s*\w+\s+IN\s*\(([^)]*)\)\s*\)/gi,
    )) {
      const values = [...m[2]!.matchAll(/'((?:[^']|'')*)'|(-?\d+(?:\.\d+)?)/g)].map((v) =>
        (v[1] ?? v[2]!).replaceAll("''", "'"),
      );
      t.checks.push({ name: m[1]!, values });
    }
    snapshot.set(name, t);
  }
  return snapshot;
}
