/**
 * `run --executor postgres`: the workflow's ASYNC / PARALLEL tasks run in `saffron worker`
 * processes, so `run` cannot drain them itself. It polls the database until the workflow has
 * settled — nothing is queued or running for it, down its chain of sub-workflows — and then
 * prints it like an inline run. A workflow left ACTIVE for an explicit `next` (no
 * `automate_next`) is driven here, as `run` always does; one with a heartbeat is being driven
 * by a worker and is only watched, so two nodes never run the same step.
 *
 * Tasks nobody claims are the usual mistake (no worker started, or one on another database),
 * so after a few seconds of that a hint says how to start one; `run` keeps waiting.
 */
import type { Runtime } from '../actors/index.js';
import {
  getHeartbeat,
  getWorkflow,
  isTerminalWorkflowStatus,
  listTasks,
  type Store,
  type WorkflowRecord,
} from '../runtime/index.js';
import type { CliIo } from './io.js';

/** What a workflow that has not settled waits for. */
export type Waiting =
  /** an explicit `next`: this command drives it */
  | { kind: 'drive' }
  /** the tasks of this workflow (itself or a sub-workflow) */
  | { kind: 'tasks'; workflowId: string }
  /** a node driving it, or a parent about to resume after its child ended */
  | { kind: 'driver' };

const childIdOf = (record: WorkflowRecord): string | undefined => {
  const context = record.actorSnapshot?.context as { childId?: unknown } | undefined;
  return typeof context?.childId === 'string' ? context.childId : undefined;
};

/** The two reads {@link waitingOn} makes (the store's, or a test's). */
export interface SettleReads {
  workflow: (id: string) => Promise<WorkflowRecord | undefined>;
  /** Whether a node is driving workflow `id` (it has a heartbeat row). */
  driven: (id: string) => Promise<boolean>;
}

const storeReads = (store: Store): SettleReads => ({
  workflow: (id) => getWorkflow(store, id),
  driven: async (id) => (await getHeartbeat(store, id)) !== undefined,
});

/** Why `record` has not settled, or undefined when it has (`top`: the workflow `run` started). */
export async function waitingOn(
  reads: SettleReads,
  record: WorkflowRecord,
  top: boolean,
): Promise<Waiting | undefined> {
  switch (record.status) {
    case 'ACTIVE': {
      if (await reads.driven(record.id)) return { kind: 'driver' };
      // The row was read before its heartbeat: a commit in between (a child that just ended,
      // which removes its heartbeat) makes the read stale, so look again at the new version.
      const now = await reads.workflow(record.id);
      if (now && now.version !== record.version) {
        // a sub-workflow that has just ended: its parent is about to be resumed
        if (!top && isTerminalWorkflowStatus(now.status)) return { kind: 'driver' };
        return waitingOn(reads, now, top);
      }
      // a sub-workflow waiting for `next` waits for whoever runs it, as it would inline
      return top ? { kind: 'drive' } : undefined;
    }
    case 'PENDING_ASYNC':
      return { kind: 'tasks', workflowId: record.id };
    case 'PENDING_SUB_WORKFLOW': {
      const childId = childIdOf(record);
      const child = childId === undefined ? undefined : await reads.workflow(childId);
      if (!child) return undefined;
      if (isTerminalWorkflowStatus(child.status)) return { kind: 'driver' };
      return waitingOn(reads, child, false);
    }
    default:
      return undefined;
  }
}

/** `text` as one shell word (quoted when it holds characters a shell would expand). */
const shellWord = (text: string) =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;

/** Options of {@link settleWithWorkers}. */
export interface SettleOptions {
  /** The database as `saffron worker --db` should name it, for the hint. */
  location: string;
  /** Time between polls (default 200 ms). */
  pollMs?: number;
  /** How long tasks may stay unclaimed before the hint (default 3 s). */
  hintAfterMs?: number;
}

/** Wait until workflow `id` has settled, driving it while it waits for `next`; returns it. */
export async function settleWithWorkers(
  runtime: Runtime,
  store: Store,
  id: string,
  io: CliIo,
  options: SettleOptions,
): Promise<WorkflowRecord> {
  const pollMs = options.pollMs ?? 200;
  const hintAfterMs = options.hintAfterMs ?? 3000;
  let unclaimedSince: number | undefined;
  let hinted = false;
  const reads = storeReads(store);
  for (;;) {
    const record = await runtime.get(id);
    const waiting = await waitingOn(reads, record, true);
    if (!waiting) {
      // settled as read, unless a commit has landed since: then look again
      if ((await runtime.get(id)).version === record.version) return record;
      continue;
    }
    if (waiting.kind === 'drive') {
      await runtime.runUntilSettled(id);
      continue;
    }
    if (waiting.kind === 'tasks' && !hinted) {
      const tasks = await listTasks(store, waiting.workflowId);
      const unclaimed = tasks.filter((t) => t.status === 'PENDING' && t.attempts === 0);
      if (unclaimed.length === 0) unclaimedSince = undefined;
      else if (unclaimedSince === undefined) unclaimedSince = Date.now();
      else if (Date.now() - unclaimedSince >= hintAfterMs) {
        hinted = true;
        const step = unclaimed[0]!.stepName;
        io.stderr.write(
          `saffron: no worker has claimed the ${unclaimed.length} task(s) of workflow ${waiting.workflowId} (step ${step}) for ${Math.round(hintAfterMs / 1000)} s; ` +
            `start \`saffron worker --db ${shellWord(options.location)}\` to run them (still waiting; Ctrl-C leaves the workflow to the workers)\n`,
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
