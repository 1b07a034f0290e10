/**
 * PostgreSQL: many workflows' step commits in ONE statement. Data-modifying CTEs insert new
 * workflow rows and update existing ones (version-checked) and insert the audit, metric and log rows and heartbeats
 * of exactly the workflows whose update succeeded (joined on the UPDATE's RETURNING), so a
 * workflow that lost a version race writes nothing while the others commit. One statement
 * is one implicit transaction and one round trip for the whole batch.
 */
import { sql, type RawBuilder } from 'kysely';
import type { StoreHandle } from '../store.js';
import { workflowToRow } from '../workflows/record.js';
import type { StepCommit } from '../workflows/stepCommit.js';

/** Commit `commits`; returns the ids of the workflows that were at their expected version. */
export async function commitStepsPostgres(
  h: StoreHandle,
  commits: readonly StepCommit[],
  now: Date,
): Promise<Set<string>> {
  const c = h.codec;
  const at = c.time(now);
  const time = (d: Date | undefined) => (d ? c.time(d) : at);
  const values = (rows: RawBuilder<unknown>[]) => sql.join(rows);
  const parts: RawBuilder<unknown>[] = [];

  const creates = commits.flatMap((x) =>
    x.create ? [workflowToRow(c, x.create, x.create.version ?? 0, now)] : [],
  );
  const updates = commits
    .filter((x) => !x.create)
    .map(
      ({ update: u }) =>
        sql`(${u.id}::uuid, ${u.expectedVersion}::int, ${u.status}::varchar, ${u.currentStepIndex}::int, ${u.currentStep}::varchar, ${c.json(u.state)}::jsonb, ${c.json(u.actorSnapshot)}::jsonb)`,
    );
  if (creates.length) {
    const columns = Object.keys(creates[0]!);
    const rows = creates.map((r) => sql`(${sql.join(Object.values(r).map((v) => sql`${v}`))})`);
    parts.push(
      sql`c AS (INSERT INTO workflow_executions (${sql.join(columns.map((k) => sql.ref(k)))}) VALUES ${values(rows)} RETURNING id)`,
    );
  }
  if (updates.length) {
    parts.push(sql`up AS (
    UPDATE workflow_executions AS w
    SET status = v.status, current_step_index = v.idx, current_step = v.step, state = v.state,
        actor_snapshot = v.snap, version = v.expected + 1, updated_at = ${at}::timestamptz
    FROM (VALUES ${values(updates)}) AS v(id, expected, status, idx, step, state, snap)
    WHERE w.id = v.id AND w.version = v.expected
    RETURNING w.id)`);
  }
  const applied = [
    ...(creates.length ? [sql`SELECT id FROM c`] : []),
    ...(updates.length ? [sql`SELECT id FROM up`] : []),
  ];
  parts.push(sql`u AS (${sql.join(applied, sql` UNION ALL `)})`);

  let ord = 0;
  const audit = commits.flatMap((x) =>
    x.audit.map(
      (e) =>
        sql`(${ord++}::int, ${e.workflowId}::uuid, ${e.eventType}::varchar, ${e.stepName ?? null}::varchar, ${c.json(e.eventData ?? {})}::jsonb, ${time(e.timestamp)}::timestamptz)`,
    ),
  );
  if (audit.length) {
    parts.push(sql`a AS (
      INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
      SELECT x.wf, x.event_type, x.step_name, x.data, x.ts
      FROM (VALUES ${values(audit)}) AS x(ord, wf, event_type, step_name, data, ts) JOIN u ON u.id = x.wf
      ORDER BY x.ord)`);
  }
  const metrics = commits.flatMap((x) =>
    x.metrics.map(
      (m) =>
        sql`(${m.workflowId}::uuid, ${m.workflowType ?? null}::varchar, ${m.stepName ?? null}::varchar, ${m.name}::varchar, ${m.value}::float8, ${m.unit ?? null}::varchar, ${c.json(m.tags ?? {})}::jsonb, ${time(m.at)}::timestamptz)`,
    ),
  );
  if (metrics.length) {
    parts.push(sql`m AS (
      INSERT INTO workflow_metrics (workflow_id, workflow_type, step_name, metric_name, metric_value, unit, tags, recorded_at)
      SELECT x.* FROM (VALUES ${values(metrics)}) AS x(wf, t, s, n, v, un, tags, ts) JOIN u ON u.id = x.wf)`);
  }
  let logOrd = 0;
  const logs = commits.flatMap((x) =>
    x.logs.map(
      (l) =>
        sql`(${logOrd++}::int, ${l.workflowId}::uuid, ${l.stepName ?? null}::varchar, ${l.level}::varchar, ${l.message}::text, ${c.json(l.data ?? {})}::jsonb, ${time(l.at)}::timestamptz)`,
    ),
  );
  if (logs.length) {
    parts.push(sql`l AS (
      INSERT INTO workflow_execution_logs (workflow_id, step_name, level, message, data, logged_at)
      SELECT x.wf, x.s, x.lvl, x.msg, x.data, x.ts
      FROM (VALUES ${values(logs)}) AS x(ord, wf, s, lvl, msg, data, ts) JOIN u ON u.id = x.wf
      ORDER BY x.ord)`);
  }
  const beats = commits.flatMap((x) =>
    typeof x.heartbeat === 'object'
      ? [
          sql`(${x.heartbeat.workflowId}::uuid, ${x.heartbeat.workerId}::varchar, ${time(x.heartbeat.at)}::timestamptz, ${x.heartbeat.currentStep ?? null}::varchar)`,
        ]
      : [],
  );
  if (beats.length) {
    parts.push(sql`hb AS (
      INSERT INTO workflow_heartbeats (workflow_id, worker_id, last_heartbeat, current_step, step_started_at)
      SELECT x.wf, x.worker, x.ts, x.step, x.ts FROM (VALUES ${values(beats)}) AS x(wf, worker, ts, step) JOIN u ON u.id = x.wf
      ON CONFLICT (workflow_id) DO UPDATE SET worker_id = excluded.worker_id, last_heartbeat = excluded.last_heartbeat,
        current_step = excluded.current_step, step_started_at = excluded.step_started_at)`);
  }
  const gone = commits
    .filter((x) => x.heartbeat === 'delete')
    .map((x) => sql`${x.update.id}::uuid`);
  if (gone.length) {
    parts.push(sql`hd AS (
      DELETE FROM workflow_heartbeats AS h USING u WHERE h.workflow_id = u.id AND h.workflow_id IN (${sql.join(gone)}))`);
  }
  const result = await sql<{ id: string }>`WITH ${sql.join(parts)} SELECT id FROM u`.execute(h.db);
  return new Set(result.rows.map((r) => r.id));
}
