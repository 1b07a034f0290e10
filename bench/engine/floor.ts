/**
 * The floor under `bench engine` on PostgreSQL: the rows the engine writes for one run of the
 * 5-step STANDARD workflow, written by hand (a pg Pool, three prepared statements, no Saffron
 * code) in the same tables of the same migrated schema, in as many transactions as the engine
 * uses. A raw commit writes one small row; a step writes a workflow row with its JSON state
 * and actor snapshot and three index entries' worth of audit and metric rows, so steps/s
 * against raw commits/s mixes what the spec asks of a step with what the engine adds. Steps/s
 * against this floor is the engine's own share.
 *
 * Per workflow, as the engine writes it (counted from a run of the bench workflow):
 *
 * - creation, one statement: the `workflow_executions` row (state, definition snapshot and
 *   hash, actor snapshot, version 0), a WORKFLOW_STARTED audit row, a heartbeat row;
 * - each of steps 1–4, one statement: the row updated at its version (step index, next step,
 *   state, actor snapshot, version + 1), a STEP_EXECUTED audit row, a `step_duration_ms`
 *   metric row;
 * - step 5, one statement: the same with the row COMPLETED, then a WORKFLOW_COMPLETED audit
 *   row, and the heartbeat row deleted.
 *
 * That is 6 commits per 5 steps; no step log rows (the step logs nothing). The JSON has the
 * shape and size of a real run's (state ~60 bytes, actor snapshot ~300, definition ~390).
 *
 * Grouping: at concurrency 1 every statement carries one workflow, as the engine's. Above it
 * the engine's group commit puts up to {@link BATCH} workflows' commits in one statement with
 * up to {@link IN_FLIGHT} statements open (at 32: always 16 and 2); the floor does the same,
 * with lanes of `BATCH` workflows in lockstep, so it pays the same transactions, WAL flushes
 * and round trips per step, and what is left between the two is the engine's CPU and the cost
 * of its general statement.
 *
 * The floor's sessions use generic plans (`plan_cache_mode=force_generic_plan`): with custom
 * plans the server plans these statements anew on every execution, about 0.25 ms of its CPU
 * per step at concurrency 1 here. The workflow rows are named by primary key (`id = ANY(…)`),
 * so the plan made while the table is small still reads them by index when it is large.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { POSTGRES_COMMIT_BATCH, POSTGRES_COMMITS_IN_FLIGHT } from '../../actors/index.js';

/** Workflows per statement at most: the engine's group commit batch on PostgreSQL. */
export const BATCH = POSTGRES_COMMIT_BATCH;
/** Statements open at once at most: the engine's group commit transactions in flight. */
export const IN_FLIGHT = POSTGRES_COMMITS_IN_FLIGHT;

const CREATE = `
WITH w AS (
  INSERT INTO workflow_executions (id, workflow_type, status, current_step_index, current_step,
    state, definition_snapshot, definition_hash, actor_snapshot, version, metadata, created_at,
    updated_at)
  SELECT x.id, $2, 'ACTIVE', 0, $3, x.state, x.definition, $4, x.snapshot, 0, '{}', $1, $1
  FROM unnest($5::uuid[], $6::jsonb[], $7::jsonb[], $8::jsonb[]) AS x(id, state, definition, snapshot)
  RETURNING id
),
a AS (
  INSERT INTO workflow_audit_log (workflow_id, event_type, event_data, timestamp)
  SELECT id, 'WORKFLOW_STARTED', '{"workflow_version":null}', $1 FROM w
),
h AS (
  INSERT INTO workflow_heartbeats (workflow_id, worker_id, last_heartbeat, current_step,
    step_started_at)
  SELECT id, $9, $1, $3, $1 FROM w
)
SELECT count(*)::int AS n FROM w`;

/** A step's statement; the last step's also completes the workflow. */
const advance = (last: boolean) => `
WITH up AS (
  UPDATE workflow_executions AS w SET ${last ? `status = 'COMPLETED', ` : ''}current_step_index = $8,
    current_step = $9::varchar, state = x.state, actor_snapshot = x.snapshot, version = $8,
    updated_at = $1
  FROM unnest($3::uuid[], $4::jsonb[], $5::jsonb[], $6::jsonb[], $7::float8[])
    AS x(id, state, snapshot, audit, ms)
  WHERE w.id = ANY($3::uuid[]) AND w.id = x.id AND w.version = $8 - 1
  RETURNING w.id, x.audit, x.ms
),
a AS (
  INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
  SELECT id, 'STEP_EXECUTED', $2, audit, $1 FROM up${
    last
      ? `
  UNION ALL SELECT id, 'WORKFLOW_COMPLETED', NULL, '{}', $1 FROM up`
      : ''
  }
),
m AS (
  INSERT INTO workflow_metrics (workflow_id, workflow_type, step_name, metric_name,
    metric_value, unit, tags, recorded_at)
  SELECT id, $10, $2, 'step_duration_ms', ms, 'ms', '{"kind":"STANDARD","outcome":"completed"}', $1
  FROM up
)${
  last
    ? `,
h AS (DELETE FROM workflow_heartbeats WHERE workflow_id IN (SELECT id FROM up))`
    : ''
}
SELECT count(*)::int AS n FROM up`;

const STEP = advance(false);
const FINISH = advance(true);

/** Time-ordered ids (UUIDv7 layout), as the engine's, so the indexes grow at their right edge. */
function idSource(): () => string {
  let lastMs = 0;
  let counter = 0;
  return () => {
    const ms = Date.now();
    counter = ms === lastMs ? (counter + 1) & 0xfff : 0;
    lastMs = ms;
    const time = ms.toString(16).padStart(12, '0');
    const random = randomBytes(8).toString('hex');
    return `${time.slice(0, 8)}-${time.slice(8)}-7${counter.toString(16).padStart(3, '0')}-${(0x8 | (parseInt(random[0]!, 16) & 0x3)).toString(16)}${random.slice(1, 4)}-${random.slice(4)}`;
  };
}

/** The workflow the engine runs: its type and number of STANDARD steps (named s1, s2, …). */
export interface FloorWorkflow {
  workflowType: string;
  steps: number;
}

/** An open floor: a pool of {@link IN_FLIGHT} connections on the benchmark's schema. */
export interface EngineFloor {
  /** Run workflows at `concurrency` for `seconds`; steps/s over the run. */
  run(concurrency: number, seconds: number): Promise<{ stepsPerS: number; elapsed: number }>;
  close(): Promise<void>;
}

/** Open the floor on `schema` of `url` (its pool connected, so a measured span sees every backend). */
export async function openEngineFloor(
  url: string,
  schema: string,
  workflow: FloorWorkflow,
): Promise<EngineFloor> {
  const pool = new pg.Pool({
    connectionString: url,
    max: IN_FLIGHT,
    options: `-c search_path=${schema} -c plan_cache_mode=force_generic_plan`,
  });
  const clients = await Promise.all(Array.from({ length: IN_FLIGHT }, () => pool.connect()));
  for (const c of clients) c.release();

  const { workflowType, steps } = workflow;
  const name = (i: number) => `s${i}`;
  // the definition and actor snapshots as a real run writes them (same keys, same order)
  const definition = JSON.stringify({
    workflow_type: workflowType,
    initial_state: {},
    automate_next: true,
    store_and_forward: false,
    steps: Array.from({ length: steps }, (_, i) => ({
      name: name(i + 1),
      type: 'STANDARD',
      function: 'bench.step',
    })),
  });
  const hash = createHash('sha256').update(definition).digest('hex');
  const snapshots = Array.from({ length: steps + 1 }, (_, done) =>
    JSON.stringify({
      machineId: `workflow-${workflowType}`,
      definitionHash: hash,
      value: done < steps ? { [name(done + 1)]: 'ready' } : 'completed',
      context: {
        saga: [],
        visits: Object.fromEntries(
          Array.from({ length: Math.min(done + 1, steps) }, (_, i) => [name(i + 1), 1]),
        ),
        attempt: 0,
        retryAt: null,
        childId: null,
        taskGroup: null,
        error: null,
        pausedFrom: null,
      },
    }),
  );
  const worker = `${hostname()}:${process.pid}`;
  const nextId = idSource();

  /** Run `text` with `values`; every one of the `expected` workflows must have been written. */
  const commit = async (statement: string, text: string, values: unknown[], expected: number) => {
    const { rows } = await pool.query<{ n: number }>({ name: statement, text, values });
    if (rows[0]?.n !== expected)
      throw new Error(`floor ${statement}: ${rows[0]?.n} of ${expected} workflows written`);
  };

  /** One lane: `batch` workflows at a time, created together, each step one statement. */
  const lane = async (first: number, batch: number, deadline: number) => {
    let workflows = 0;
    for (let i = 0; performance.now() < deadline; i++) {
      const ids = Array.from({ length: batch }, nextId);
      const states = Array.from({ length: batch }, (_, k) => ({
        worker: first + k,
        i,
      })) as Record<string, number>[];
      const now = () => new Date().toISOString();
      await commit(
        'floor_create',
        CREATE,
        [
          now(),
          workflowType,
          name(1),
          hash,
          ids,
          states.map((s) => JSON.stringify(s)),
          ids.map(() => definition),
          ids.map(() => snapshots[0]),
          worker,
        ],
        batch,
      );
      for (let step = 1; step <= steps; step++) {
        // the step's work: its output merged into the state, timed like the engine's
        const ms: number[] = [];
        const stateTexts = states.map((s) => {
          const t0 = performance.now();
          s[name(step)] = s.i! + 1;
          const text = JSON.stringify(s);
          ms.push(Math.round((performance.now() - t0) * 1000) / 1000);
          return text;
        });
        const last = step === steps;
        await commit(
          last ? 'floor_finish' : 'floor_step',
          last ? FINISH : STEP,
          [
            now(),
            name(step),
            ids,
            stateTexts,
            ids.map(() => snapshots[step]),
            ms.map((d) => `{"duration_ms":${d},"kind":"STANDARD"}`),
            ms,
            step,
            last ? null : name(step + 1),
            workflowType,
          ],
          batch,
        );
      }
      workflows += batch;
    }
    return workflows;
  };

  return {
    async run(concurrency, seconds) {
      const batch = Math.min(BATCH, concurrency);
      const lanes = Math.ceil(concurrency / batch);
      const t0 = performance.now();
      const done = await Promise.all(
        Array.from({ length: lanes }, (_, l) => lane(l * batch, batch, t0 + seconds * 1000)),
      );
      const elapsed = (performance.now() - t0) / 1000;
      const workflows = done.reduce((a, b) => a + b, 0);
      return { stepsPerS: (workflows * steps) / elapsed, elapsed };
    },
    close: () => pool.end(),
  };
}
