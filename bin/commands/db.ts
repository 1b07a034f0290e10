/** `saffron db init | validate | stats`. */
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { migrations } from '../../migrations/index.js';
import {
  collectStats,
  ensureEdgeSchema,
  migrate,
  validateSchema,
  type MigrationProgress,
  type Store,
} from '../../runtime/index.js';
import { CliExit, type CliIo, printJson } from '../io.js';
import { type DatabaseOptions, withStore } from '../storeOption.js';

interface DbOptions extends DatabaseOptions {
  json?: boolean;
}

function progressReporter(io: CliIo, quiet: boolean): (event: MigrationProgress) => void {
  let bar: cliProgress.SingleBar | undefined;
  return (event) => {
    if (quiet) return;
    if (event.kind === 'plan') {
      const from = event.current ?? 'an empty database';
      if (event.pending.length === 0) return;
      io.stderr.write(`applying ${event.pending.length} migration(s) from ${from}\n`);
      if (io.stderr.isTTY) {
        bar = new cliProgress.SingleBar(
          {
            format: '  [{bar}] {value}/{total} {migration}',
            stream: process.stderr,
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(event.pending.length, 0, { migration: '' });
      }
      return;
    }
    if (bar) {
      bar.update(event.index + 1, { migration: event.id });
      if (event.index + 1 === event.total) bar.stop();
    } else {
      io.stderr.write(
        `  [${event.index + 1}/${event.total}] ${event.id} (${Math.round(event.durationMs)} ms)\n`,
      );
    }
  };
}

async function init(store: Store, label: string, io: CliIo, json: boolean): Promise<void> {
  if (store.dialect === 'sqlite') {
    const created = await ensureEdgeSchema(store);
    if (json) printJson(io, { ok: true, database: label, created });
    else
      io.stdout.write(
        created.length
          ? `created ${created.length} edge tables in ${label}\n`
          : `edge schema of ${label} is up to date\n`,
      );
    return;
  }
  const results = await migrate(store, migrations, progressReporter(io, json));
  const failed = results.find((r) => r.status === 'failed');
  if (json) {
    printJson(io, {
      ok: !failed,
      database: label,
      migrations: results.map((r) => ({
        id: r.id,
        status: r.status,
        ...(r.error ? { error: r.error.message } : {}),
      })),
    });
  }
  if (failed) throw new CliExit(1, `error: ${failed.error?.message ?? failed.id}`);
  if (!json) {
    const applied = results.filter((r) => r.status === 'applied').length;
    io.stdout.write(
      applied
        ? `applied ${applied} migration(s) to ${label}; now at ${migrations.at(-1)!.id}\n`
        : `${label} is up to date (${migrations.at(-1)!.id})\n`,
    );
  }
}

async function validate(store: Store, label: string, io: CliIo, json: boolean): Promise<void> {
  const result = await validateSchema(store);
  if (json)
    printJson(io, {
      ok: result.ok,
      database: label,
      tablesChecked: result.tablesChecked,
      drift: result.drift,
    });
  else if (result.ok)
    io.stdout.write(
      `schema of ${label} matches the definitions (${result.tablesChecked} tables)\n`,
    );
  else {
    io.stdout.write(
      `schema of ${label} differs from the definitions in ${result.drift.length} place(s):\n`,
    );
    for (const d of result.drift) io.stdout.write(`  ${d.table}: ${d.message}\n`);
    io.stdout.write(
      `run 'saffron db init' to apply pending migrations; other drift needs a migration or a manual fix\n`,
    );
  }
  if (!result.ok) throw new CliExit(1);
}

function formatBytes(bytes: number | null): string {
  if (bytes === null) return 'unknown';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

async function stats(store: Store, label: string, io: CliIo, json: boolean): Promise<void> {
  const s = await collectStats(store);
  if (json) {
    printJson(io, { database: label, ...s });
    return;
  }
  io.stdout.write(
    `database ${label} (${s.dialect}), size ${formatBytes(s.sizeBytes)}\n\nrows per table:\n`,
  );
  const width = Math.max(...Object.keys(s.tables).map((t) => t.length));
  for (const [table, n] of Object.entries(s.tables))
    io.stdout.write(`  ${table.padEnd(width)}  ${n === null ? 'missing' : n}\n`);
  io.stdout.write('\nworkflows by status:\n');
  const statuses = Object.entries(s.workflowsByStatus);
  if (statuses.length === 0) io.stdout.write('  (none)\n');
  for (const [status, n] of statuses) io.stdout.write(`  ${status.padEnd(22)}  ${n}\n`);
}

/** Register the `db` command group. */
export function registerDbCommands(program: Command, io: CliIo): void {
  const db = program.command('db').description('manage the database schema');
  const withDatabase = (c: Command) =>
    c
      .option(
        '--database-url <url>',
        'postgres://… URL, pglite:DIR or a SQLite file (default: DATABASE_URL, else embedded PGlite)',
      )
      .option('--db <location>', 'alias of --database-url')
      .option('--json', 'print the result as JSON');
  const run = (fn: typeof init) => (options: DbOptions) =>
    withStore(options, io, (store, label) => fn(store, label, io, options.json === true));
  withDatabase(
    db
      .command('init')
      .description('apply all pending migrations (a SQLite file: create the edge tables)'),
  ).action(run(init));
  withDatabase(
    db
      .command('validate')
      .description('compare the live schema with the definitions; exit 1 on drift'),
  ).action(run(validate));
  withDatabase(
    db.command('stats').description('row counts per table, workflows by status, database size'),
  ).action(run(stats));
}
