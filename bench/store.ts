/**
 * bench store: single-row commit rate of workflow-row upserts through the store, per
 * dialect, against the raw driver inserting the same row on the same database in the same
 * run. Each operation is its own autocommit transaction, so both sides pay one durable commit
 * per row; the ratio shows what the query layer costs on top of the database.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrations } from '../migrations/index.js';
import { sqliteCodec } from '../runtime/store/codec.js';
import {
  ensureEdgeSchema,
  migrate,
  openStore,
  upsertWorkflow,
  type Store,
} from '../runtime/store/index.js';
import { workflowToRow } from '../runtime/store/workflows/record.js';
import { type BenchOptions, type BenchResult, rate, round } from './harness.js';

// The raw side writes the same row the store writes (every column workflowToRow fills).
const COLUMNS = Object.keys(
  workflowToRow(
    sqliteCodec,
    { id: '', workflowType: '', status: 'ACTIVE', state: {} },
    0,
    new Date(),
  ),
);
const INSERT = `INSERT INTO workflow_executions (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;

function sampleState(i: number) {
  return {
    amount_minor: 1000 + i,
    currency: 'EUR',
    terminal: 'pos-17',
    card: { token: `tok_${i}`, last4: '4242' },
    approved: true,
  };
}

type RawInsert = (i: number) => unknown;

function rawInserter(store: Store): RawInsert {
  const row = (i: number) => {
    const values = workflowToRow(
      store.codec,
      {
        id: randomUUID(),
        workflowType: 'bench_payment',
        workflowVersion: '1',
        status: 'ACTIVE',
        currentStepIndex: 2,
        currentStep: 'authorize',
        state: sampleState(i),
      },
      0,
      new Date(),
    ) as Record<string, unknown>;
    return COLUMNS.map((c) => values[c]);
  };
  const driver = store.driver;
  switch (driver.dialect) {
    case 'postgres':
      return (i) => driver.pool.query({ name: 'bench_raw_insert', text: INSERT, values: row(i) });
    case 'pglite':
      return (i) => driver.pglite.query(INSERT, row(i));
    case 'sqlite': {
      const statement = driver.database.prepare(INSERT.replace(/\$\d+/g, '?'));
      return (i) => statement.run(...row(i));
    }
  }
}

/**
 * Both sides run in alternating chunks so that drift in the machine's fsync latency (large
 * on shared virtual disks) lands on both equally; each side's rate is its rows over its own
 * accumulated time.
 */
async function measure(store: Store, count: number, chunks: number, progress: (m: string) => void) {
  const raw = rawInserter(store);
  const upsert = (i: number) =>
    upsertWorkflow(store, {
      id: randomUUID(),
      workflowType: 'bench_payment',
      workflowVersion: '1',
      status: 'ACTIVE',
      currentStepIndex: 2,
      currentStep: 'authorize',
      state: sampleState(i),
    });
  await rate(Math.min(200, count), raw); // warm-up: connections, statement caches, JIT
  await rate(Math.min(200, count), upsert);
  const size = Math.max(1, Math.round(count / chunks));
  let rawSeconds = 0;
  let storeSeconds = 0;
  for (let c = 0; c < chunks; c++) {
    rawSeconds += size / (await rate(size, raw));
    storeSeconds += size / (await rate(size, upsert));
    if ((c + 1) % Math.max(1, Math.floor(chunks / 4)) === 0)
      progress(`  ${c + 1}/${chunks} chunks`);
  }
  const rows = size * chunks;
  return { raw: rows / rawSeconds, store: rows / storeSeconds };
}

/** Run the store benchmark. */
export async function run(options: BenchOptions): Promise<BenchResult> {
  const result: BenchResult = { bench: 'store', metrics: {}, baselines: {}, ratios: {}, notes: [] };
  const count = Math.max(50, Math.round(2000 * options.scale));
  const chunks = 20;
  const url = process.env.DATABASE_URL;
  const dir = mkdtempSync(join(tmpdir(), 'saffron-bench-'));
  const targets: { name: 'postgres' | 'pglite' | 'sqlite'; location: string }[] = [
    ...(url ? [{ name: 'postgres' as const, location: url }] : []),
    { name: 'pglite', location: `pglite:${join(dir, 'pglite')}` },
    { name: 'sqlite', location: join(dir, 'edge.db') },
  ];
  if (!url) result.notes.push('DATABASE_URL not set: PostgreSQL not measured');
  try {
    for (const target of targets) {
      options.progress(
        `${target.name}: ${count} single-row commits each side, in ${chunks} alternating chunks`,
      );
      let schema: string | undefined;
      if (target.name === 'postgres') {
        schema = `saffron_bench_${process.pid}`;
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
        await admin.end();
      }
      const store = await openStore(target.location, { postgres: { schema, maxConnections: 1 } });
      try {
        if (store.dialect === 'sqlite') await ensureEdgeSchema(store);
        else await migrate(store, migrations);
        const { raw, store: s } = await measure(store, count, chunks, options.progress);
        result.metrics[`${target.name}_upserts_per_s`] = round(s);
        result.baselines[`${target.name}_raw_inserts_per_s`] = round(raw);
        result.ratios[target.name] = round(s / raw);
      } finally {
        await store.close();
        if (schema) {
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await admin.end();
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}
