/**
 * Reading a measurement's outcome from the database, the same way for both systems: how many
 * of the benchmark's workflows have finished (and how many failed), and when each one
 * finished. The finishing moment is the timestamp each system writes with its terminal
 * status — Saffron's `workflow_executions.updated_at` (the committing process's clock) and
 * DBOS's `workflow_status.updated_at` (the database's `now()`, epoch ms) — both taken just
 * before that transaction commits, on the same machine as the start times.
 */
import type pg from 'pg';
import { FLOW_TYPE } from './flow.js';

/** Finished workflows so far. */
export interface Progress {
  done: number;
  failed: number;
}

/** One system's view of its schema. */
export interface CompletionProbe {
  progress(): Promise<Progress>;
  /** Completion time (wall-clock ms) of every successfully finished workflow, by id. */
  completedAt(): Promise<Map<string, number>>;
}

interface Tables {
  table: string;
  typeColumn: string;
  idColumn: string;
  success: string;
  failures: readonly string[];
  /** SQL turning the row's completion column into epoch milliseconds. */
  doneMs: string;
}

const SAFFRON: Tables = {
  table: 'workflow_executions',
  typeColumn: 'workflow_type',
  idColumn: 'id',
  success: 'COMPLETED',
  failures: ['FAILED', 'FAILED_ROLLED_BACK', 'CANCELLED'],
  doneMs: 'extract(epoch from updated_at) * 1000',
};

const DBOS: Tables = {
  table: 'workflow_status',
  typeColumn: 'name',
  idColumn: 'workflow_uuid',
  success: 'SUCCESS',
  failures: ['ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'],
  doneMs: 'updated_at',
};

function probe(pool: pg.Pool, schema: string, t: Tables): CompletionProbe {
  const from = `"${schema}".${t.table} WHERE ${t.typeColumn} = $1`;
  return {
    async progress() {
      const { rows } = await pool.query<{ done: string; failed: string }>(
        `SELECT count(*) FILTER (WHERE status = $2) AS done,
                count(*) FILTER (WHERE status = ANY($3)) AS failed
           FROM ${from}`,
        [FLOW_TYPE, t.success, t.failures],
      );
      return { done: Number(rows[0]?.done ?? 0), failed: Number(rows[0]?.failed ?? 0) };
    },
    async completedAt() {
      const { rows } = await pool.query<{ id: string; done: string }>(
        `SELECT ${t.idColumn} AS id, ${t.doneMs} AS done FROM ${from} AND status = $2`,
        [FLOW_TYPE, t.success],
      );
      return new Map(rows.map((r) => [r.id, Number(r.done)]));
    },
  };
}

/** Saffron's workflows of the benchmark type in `schema`. */
export const saffronProbe = (pool: pg.Pool, schema: string): CompletionProbe =>
  probe(pool, schema, SAFFRON);

/** DBOS's parent workflows (not the queued children) in system schema `schema`. */
export const dbosProbe = (pool: pg.Pool, schema: string): CompletionProbe =>
  probe(pool, schema, DBOS);
