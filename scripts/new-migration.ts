/**
 * Writes a new migration file whose statements create the given tables of the current schema
 * model (PostgreSQL DDL). Used once per new table set; the output is frozen and edited by
 * hand only before it ships. Usage: tsx scripts/new-migration.ts ID "description" [table…]
 * (no tables = every cloud table except alembic_version, which the migrator creates).
 */
import { writeFileSync } from 'node:fs';
import { postgresSchemaStatements } from '../runtime/schema/render/postgres.js';
import { CLOUD_SCHEMA } from '../runtime/schema/tables.js';

const [id, description, ...names] = process.argv.slice(2);
if (!id || !description) {
  process.stderr.write('usage: tsx scripts/new-migration.ts ID "description" [table…]\n');
  process.exit(2);
}
const tables = CLOUD_SCHEMA.filter((t) =>
  names.length > 0 ? names.includes(t.name) : t.name !== 'alembic_version',
);
const statements = postgresSchemaStatements(tables);
const body = `/** Migration ${id}: ${description}. Frozen: never edit a shipped migration; add a new one. */
import type { Migration } from '../runtime/store/migrate/migration.js';

export const migration: Migration = {
  id: ${JSON.stringify(id)},
  description: ${JSON.stringify(description)},
  statements: [
${statements.map((s) => `    ${'`'}${s.replaceAll('`', '\\`')}${'`'},`).join('\n')}
  ],
};
`;
writeFileSync(new URL(`../migrations/${id}.ts`, import.meta.url), body);
process.stdout.write(`wrote migrations/${id}.ts with ${statements.length} statements\n`);
