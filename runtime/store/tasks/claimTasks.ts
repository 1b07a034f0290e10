import { translateDriverError } from '../errors.js';
import { claimTasksPostgres } from '../postgres/claimTasksPostgres.js';
import { claimTasksSqlite } from '../sqlite/claimTasksSqlite.js';
import type { StoreHandle } from '../store.js';
import { type ClaimedTask, rowToClaimedTask } from './claimedTask.js';

/** What a worker asks for. */
export interface TaskClaim {
  workerId: string;
  limit: number;
  /** How long the claim holds before another worker may take the task over. */
  leaseMs: number;
  now: Date;
  /** Serve only tasks of these regions (and tasks with no region); all when undefined. */
  regions?: readonly string[];
}

/** Claim up to `claim.limit` due PENDING tasks for `claim.workerId`. */
export async function claimTasks(h: StoreHandle, claim: TaskClaim): Promise<ClaimedTask[]> {
  try {
    const ids =
      h.dialect === 'sqlite'
        ? await claimTasksSqlite(h, claim)
        : await claimTasksPostgres(h, claim);
    if (ids.length === 0) return [];
    const rows = await h.db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
    return rows
      .map((r) => rowToClaimedTask(h.codec, r))
      .sort((a, b) => (a.taskIndex ?? 0) - (b.taskIndex ?? 0));
  } catch (error) {
    throw translateDriverError(error, 'claim tasks');
  }
}
