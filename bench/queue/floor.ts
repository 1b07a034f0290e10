/**
 * `floor`: the database work a Saffron task cannot do without, and nothing else — no runtime,
 * no state machine, no checks beyond the ones a correct completion needs. It answers a
 * question the other figures cannot: how fast could any runtime go that writes what the spec
 * asks of one task, on this machine? If the floor is below a goal, no change to the runtime
 * reaches it; only writing less per task would.
 *
 * The tasks are Saffron's own (the same one-ASYNC-step workflows, started the same way as
 * `saffron`'s). Each worker process runs one loop of single statements; each statement
 *
 * - records the tasks the previous one claimed (COMPLETED with the body's result, only while
 *   this worker still holds them),
 * - moves their workflows to COMPLETED at the version read at the claim, writing back a state
 *   and an actor snapshot of the same size as the ones it read (a real runtime writes new ones),
 * - appends the two audit rows the spec names for it (STEP_EXECUTED, WORKFLOW_COMPLETED) —
 *   not Saffron's own TASK_COMPLETED,
 * - deletes the workflows' heartbeat rows, and
 * - claims the next `2 × concurrency` tasks through `saffron_claimable_tasks()` (SKIP
 *   LOCKED, with a lease), returning only what a transition needs: the workflow's version,
 *   state and snapshot, as text that is never parsed.
 *
 * The bodies run synchronously between statements. Tasks are claimed in batches as large as
 * `saffron_prefetch` holds at most (`concurrency` running plus `concurrency` ahead), so the
 * statements cost each task no more than Saffron's best case does.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { saffron } from './saffron.js';
import { taskBody, type QueueConfig, type QueueSystem } from './system.js';

/** How long an idle loop sleeps before it claims again (throughput runs only drain a backlog). */
const IDLE_MS = 20;
/** The claim's lease; a run ends long before. */
const LEASE_MS = 60_000;

/** A claimed task: what completing it and its workflow needs. */
interface Claimed {
  /** The body's result, as JSON (set once the body has run). */
  result?: string;
  id: string;
  wf: string;
  version: number;
  state: string;
  snapshot: string;
}

const STATEMENT = `
WITH v AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS v(id uuid, wf uuid, version int, state jsonb, snapshot jsonb, result jsonb)
),
done AS (
  UPDATE tasks AS t SET status = 'COMPLETED', result = v.result, error = NULL,
    completed_at = $3::timestamptz, lease_expires_at = NULL
  FROM v
  WHERE t.id = v.id AND t.status = 'CLAIMED' AND t.worker_id = $2
  RETURNING t.id
),
up AS (
  UPDATE workflow_executions AS w SET status = 'COMPLETED',
    current_step_index = w.current_step_index + 1, current_step = NULL,
    state = v.state, actor_snapshot = v.snapshot, version = v.version + 1,
    updated_at = $3::timestamptz
  FROM v
  WHERE v.id IN (SELECT id FROM done) AND w.id = v.wf AND w.version = v.version
  RETURNING w.id
),
audit AS (
  INSERT INTO workflow_audit_log (workflow_id, event_type, step_name, event_data, timestamp)
  SELECT up.id, e.type, e.step, e.data, $3::timestamptz
  FROM up CROSS JOIN (VALUES
    (1, 'STEP_EXECUTED', 'work', '{"kind":"ASYNC","tasks":1,"failed":0}'::jsonb),
    (2, 'WORKFLOW_COMPLETED', NULL, '{}'::jsonb)) AS e(ord, type, step, data)
  ORDER BY up.id, e.ord
),
gone AS (DELETE FROM workflow_heartbeats WHERE workflow_id IN (SELECT id FROM up)),
picked AS (
  SELECT picked_id FROM saffron_claimable_tasks($3::timestamptz, $4::int, NULL, '{}') AS picked_id
),
claimed AS (
  UPDATE tasks SET status = 'CLAIMED', worker_id = $2, claimed_at = $3::timestamptz,
    lease_expires_at = $5::timestamptz, attempts = attempts + 1
  FROM workflow_executions AS w
  WHERE tasks.id = ANY(ARRAY(SELECT picked_id FROM picked)) AND w.id = tasks.workflow_id
  RETURNING tasks.id, tasks.workflow_id AS wf, w.version, w.state::text AS state,
    w.actor_snapshot::text AS snapshot
)
SELECT * FROM claimed`;

/** The completions parameter: JSON written around the state and snapshot texts, never parsed. */
const completionsOf = (tasks: readonly Claimed[]) =>
  `[${tasks
    .map(
      (t) =>
        `{"id":"${t.id}","wf":"${t.wf}","version":${t.version},"state":${t.state},"snapshot":${t.snapshot},"result":${t.result ?? 'null'}}`,
    )
    .join(',')}]`;

async function floorWorker(
  config: QueueConfig,
  onStart: (key: string) => void,
  onError: (error: unknown) => void,
) {
  // connected and ready, as the port asks: one connection, one statement at a time
  const client = new pg.Client({
    connectionString: config.url,
    options: `-c search_path=${config.schema}`,
  });
  await client.connect();
  const workerId = `floor-${process.pid}`;
  const places = config.concurrency * 2;
  let running = false;
  let loop: Promise<void> | undefined;
  async function drain(): Promise<void> {
    let held: Claimed[] = [];
    while (running || held.length > 0) {
      const now = Date.now();
      const { rows } = await client.query<Claimed>({
        name: 'floor',
        text: STATEMENT,
        values: [
          completionsOf(held),
          workerId,
          new Date(now).toISOString(),
          running ? places : 0,
          new Date(now + LEASE_MS).toISOString(),
        ],
      });
      for (const task of rows) {
        onStart(task.wf);
        task.result = JSON.stringify(taskBody());
      }
      held = rows;
      if (held.length === 0 && running) await sleep(IDLE_MS);
    }
  }
  return {
    go() {
      running = true;
      loop = drain().catch((error: unknown) => {
        running = false;
        onError(error);
      });
      return Promise.resolve();
    },
    async stop() {
      running = false;
      await loop;
      await client.end();
    },
  };
}

export const floor: QueueSystem = {
  name: 'floor',
  describe: (c) =>
    `not a queue: the writes the spec asks of one of saffron's tasks and nothing more, in one statement per batch of up to ${c * 2} tasks per process (records the previous batch: task, workflow at its version, STEP_EXECUTED and WORKFLOW_COMPLETED audit rows, heartbeat; claims the next), no runtime; with the cores saturated, the bound for any runtime writing the same rows`,
  open: (config) => saffron.open(config),
  worker: floorWorker,
};
