/**
 * PostgreSQL: a batch of step writes (workflows/stepWrite.ts), many workflows' steps,
 * committed in ONE statement. Data-modifying CTEs insert new workflow rows and update existing
 * ones (version-checked) and insert the audit, metric and log rows and heartbeats of exactly
 * the workflows whose update succeeded (joined on the UPDATE's RETURNING), so a workflow that
 * lost a version race writes nothing while the others commit. One statement is one implicit
 * transaction and one round trip for the whole batch.
 *
 * The rows travel as JSON arrays read with `jsonb_to_recordset`, so the statement's text is
 * the same for every batch that writes the same kinds of row, whatever its size: each text is
 * compiled once per store and prepared once per connection (prepareStatements.ts), where a
 * text built per batch (a `VALUES` list per kind of row) was built and compiled by Kysely on
 * every commit and, under load, where batches differ in size, parsed and planned by the
 * server on every commit too. A text has only the CTEs of the kinds its batch writes: a step
 * of the bench's workflow writes no log row and, but for its first and last, no heartbeat,
 * and each CTE over no rows still opened and locked its table and indexes on every
 * execution, about 8 % of the server's CPU per step at concurrency 1 (bench engine). A
 * handful of texts come up (creation, a step, the last step), far under the bound of
 * prepared statements per connection.
 *
 * Each value is written once: keys of absent values are left out (`jsonb_to_recordset`
 * reads them as NULL), and a row's time only where it is not the commit's. The workflow rows
 * are named by primary key (`id = ANY(…)`), so the plan prepared while the table was small
 * still reads them by index when it is large.
 */
import { type RawBuilder, sql } from 'kysely';
import { executeCached } from '../cachedQuery.js';
import type { StoreHandle } from '../store.js';
import type { StepWrite } from '../workflows/stepWrite.js';

/** Commit `writes`; returns the ids of the workflows that were at their expected version. */
export async function commitStepWritesPostgres(
  h: StoreHandle,
  writes: readonly StepWrite[],
  now: Date,
): Promise<Set<string>> {
  const c = h.codec;
  // one literal per kind of row, one shape each: JSON.stringify leaves undefined keys out
  const creates: unknown[] = [];
  const updates: unknown[] = [];
  const audit: unknown[] = [];
  const metrics: unknown[] = [];
  const logs: unknown[] = [];
  const beats: unknown[] = [];
  const gone: string[] = [];
  for (const x of writes) {
    const w = x.create;
    if (w)
      creates.push({
        id: w.id,
        workflow_type: w.workflowType,
        workflow_version: w.workflowVersion ?? undefined,
        status: w.status,
        current_step_index: w.currentStepIndex ?? 0,
        current_step: w.currentStep ?? undefined,
        state: w.state,
        definition_snapshot: w.definitionSnapshot ?? undefined,
        definition_hash: w.definitionHash ?? undefined,
        actor_snapshot: w.actorSnapshot ?? undefined,
        owner_id: w.ownerId ?? undefined,
        data_region: w.dataRegion ?? undefined,
        parent_workflow_id: w.parentWorkflowId ?? undefined,
        idempotency_key: w.idempotencyKey ?? undefined,
        version: w.version ?? 0,
        metadata: w.metadata ?? {},
        created_at: w.createdAt ?? undefined,
        updated_at: w.updatedAt ?? undefined,
      });
    else {
      const u = x.update;
      updates.push({
        id: u.id,
        expected: u.expectedVersion,
        status: u.status,
        idx: u.currentStepIndex,
        step: u.currentStep ?? undefined,
        state: u.state,
        snap: u.actorSnapshot,
      });
    }
    for (const e of x.audit)
      audit.push({
        wf: e.workflowId,
        type: e.eventType,
        step: e.stepName ?? undefined,
        data: e.eventData ?? {},
        ts: e.timestamp ?? undefined,
      });
    for (const m of x.metrics)
      metrics.push({
        wf: m.workflowId,
        t: m.workflowType ?? undefined,
        s: m.stepName ?? undefined,
        n: m.name,
        v: m.value,
        un: m.unit ?? undefined,
        tags: m.tags ?? {},
        ts: m.at ?? undefined,
      });
    for (const l of x.logs)
      logs.push({
        wf: l.workflowId,
        s: l.stepName ?? undefined,
        lvl: l.level,
        msg: l.message,
        data: l.data ?? {},
        ts: l.at ?? undefined,
      });
    if (typeof x.heartbeat === 'object')
      beats.push({
        wf: x.heartbeat.workflowId,
        worker: x.heartbeat.workerId,
        ts: x.heartbeat.at ?? undefined,
        step: x.heartbeat.currentStep ?? undefined,
      });
    else if (x.heartbeat === 'delete') gone.push(x.update.id);
  }
  if (creates.length === 0 && updates.length === 0) return new Set();
  // the kinds of row this batch has, each with its rows as one JSON literal
  const kinds: Kind[] = [];
  const parameters: unknown[] = [c.time(now)];
  const add = (kind: Kind, rows: unknown[]) => {
    if (rows.length === 0) return;
    kinds.push(kind);
    parameters.push(kind === 'hd' ? rows : c.json(rows));
  };
  add('cr', creates);
  add('up', updates);
  add('a', audit);
  add('m', metrics);
  add('l', logs);
  add('hb', beats);
  add('hd', gone);
  const result = await executeCached<{ id: string }>(
    h,
    `commitStepWrites:${kinds.join(',')}`,
    parameters,
    () => ({ compile: () => commitStatement(kinds, parameters).compile(h.db) }),
  );
  return new Set(result.rows.map((r) => r.id));
}

/** The kinds of row a batch writes, in the order of the statement's CTEs. */
type Kind = 'cr' | 'up' | 'a' | 'm' | 'l' | 'hb' | 'hd';

/**
 * The statement of a batch that writes `kinds`, whose values are `parameters` in that order
 * after the commit's time. It has only those CTEs: one over no rows would still open and lock
 * its table and each of its indexes on every execution.
 */
function commitStatement(
  kinds: readonly Kind[],
  parameters: readonly unknown[],
): RawBuilder<{ id: string }> {
  const has = (kind: Kind) => kinds.includes(kind);
  const rows = (kind: Kind) => sql`${parameters[kinds.indexOf(kind) + 1]}`;
  const ctes = [sql`t AS (SELECT ${parameters[0]}::timestamptz AS now)`];
  const written: RawBuilder<unknown>[] = [];
  if (has('cr')) {
    ctes.push(sql`cr AS (
      INSERT INTO workflow_executions (id, workflow_type, workflow_version, status,
        current_step_index, current_step, state, definition_snapshot, definition_hash,
        actor_snapshot, owner_id, data_region, parent_workflow_id, idempotency_key, version,
        metadata, created_at, updated_at)
      SELECT x.id, x.workflow_type, x.workflow_version, x.status, x.current_step_index,
        x.current_step, x.state, x.definition_snapshot, x.definition_hash, x.actor_snapshot,
        x.owner_id, x.data_region, x.parent_workflow_id, x.idempotency_key, x.version, x.metadata,
        COALESCE(x.created_at, (SELECT now FROM t)), COALESCE(x.updated_at, (SELECT now FROM t))
      FROM jsonb_to_recordset(${rows('cr')}::jsonb) AS x(id uuid, workflow_type varchar,
        workflow_version varchar, status varchar, current_step_index int, current_step varchar,
        state jsonb, definition_snapshot jsonb, definition_hash varchar, actor_snapshot jsonb,
        owner_id varchar, data_region varchar, parent_workflow_id uuid, idempotency_key varchar,
        version int, metadata jsonb, created_at timestamptz, updated_at timestamptz)
      RETURNING id
    )`);
    written.push(sql`SELECT id FROM cr`);
  }
  if (has('up')) {
    ctes.push(
      sql`v AS (
      SELECT * FROM jsonb_to_recordset(${rows('up')}::jsonb) AS v(id uuid, expected int,
        status varchar, idx int, step varchar, state jsonb, snap jsonb)
    )`,
      sql`up AS (
      UPDATE workflow_executions AS w
      SET status = v.status, current_step_index = v.idx, current_step = v.step, state = v.state,
        actor_snapshot = v.snap, version = v.expected + 1, updated_at = (SELECT now FROM t)
      FROM v
      WHERE w.id = ANY(ARRAY(SELECT id FROM v)) AND w.id = v.id AND w.version = v.expected
      RETURNING w.id
    )`,
    );
    written.push(sql`SELECT id FROM up`);
  }
  ctes.push(sql`u AS (${sql.join(written, sql` UNION ALL `)})`);
  if (has('a'))
    ctes.push(sql`a AS (
      INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
      SELECT x.wf, x.type, x.step, x.data, COALESCE(x.ts, (SELECT now FROM t))
      FROM ROWS FROM (jsonb_to_recordset(${rows('a')}::jsonb) AS (wf uuid, type varchar,
        step varchar, data jsonb, ts timestamptz)) WITH ORDINALITY AS x
      JOIN u ON u.id = x.wf
      ORDER BY x.ordinality
    )`);
  if (has('m'))
    ctes.push(sql`m AS (
      INSERT INTO workflow_metrics (workflow_id, workflow_type, step_name, metric_name,
        metric_value, unit, tags, recorded_at)
      SELECT x.wf, x.t, x.s, x.n, x.v, x.un, x.tags, COALESCE(x.ts, (SELECT now FROM t))
      FROM jsonb_to_recordset(${rows('m')}::jsonb) AS x(wf uuid, t varchar, s varchar, n varchar,
        v float8, un varchar, tags jsonb, ts timestamptz)
      JOIN u ON u.id = x.wf
    )`);
  if (has('l'))
    ctes.push(sql`l AS (
      INSERT INTO workflow_execution_logs (workflow_id, step_name, level, message, data, logged_at)
      SELECT x.wf, x.s, x.lvl, x.msg, x.data, COALESCE(x.ts, (SELECT now FROM t))
      FROM ROWS FROM (jsonb_to_recordset(${rows('l')}::jsonb) AS (wf uuid, s varchar, lvl varchar,
        msg text, data jsonb, ts timestamptz)) WITH ORDINALITY AS x
      JOIN u ON u.id = x.wf
      ORDER BY x.ordinality
    )`);
  if (has('hb'))
    ctes.push(sql`hb AS (
      INSERT INTO workflow_heartbeats (workflow_id, worker_id, last_heartbeat, current_step,
        step_started_at)
      SELECT x.wf, x.worker, COALESCE(x.ts, (SELECT now FROM t)), x.step,
        COALESCE(x.ts, (SELECT now FROM t))
      FROM jsonb_to_recordset(${rows('hb')}::jsonb) AS x(wf uuid, worker varchar, ts timestamptz,
        step varchar)
      JOIN u ON u.id = x.wf
      ON CONFLICT (workflow_id) DO UPDATE SET worker_id = excluded.worker_id,
        last_heartbeat = excluded.last_heartbeat, current_step = excluded.current_step,
        step_started_at = excluded.step_started_at
    )`);
  if (has('hd'))
    ctes.push(sql`hd AS (
      DELETE FROM workflow_heartbeats AS h USING u
      WHERE h.workflow_id = u.id AND h.workflow_id = ANY(${rows('hd')}::uuid[])
    )`);
  return sql<{ id: string }>`WITH ${sql.join(ctes)} SELECT id FROM u`;
}
