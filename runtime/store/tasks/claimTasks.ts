/**
 * Claiming due tasks. A claim takes PENDING tasks whose `run_after` has come and tasks whose
 * claim expired (their worker died): one statement both hands expired tasks over and claims
 * new ones, so a worker needs no separate release pass before each claim, and takeover
 * happens as soon as any worker serving the task's region asks for work. The claim returns
 * the claimed rows themselves (`RETURNING`): no second read.
 */
import type { RawBuilder } from 'kysely';
import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import { claimTasksPostgres } from '../postgres/claimTasksPostgres.js';
import { claimTasksSqlite } from '../sqlite/claimTasksSqlite.js';
import type { StoreHandle } from '../store.js';
import { type ClaimedRow, type ClaimedTask, rowToClaimedTask } from './claimedTask.js';

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

/** A claim statement of one dialect: its SQL and its parameters, in the order they appear. */
export interface ClaimStatement {
  query: RawBuilder<ClaimedRow>;
  parameters: unknown[];
}

/**
 * Claim up to `claim.limit` due PENDING tasks, or tasks whose claim expired, for
 * `claim.workerId`; in declaration order within a group.
 */
export async function claimTasks(h: StoreHandle, claim: TaskClaim): Promise<ClaimedTask[]> {
  const statement =
    h.dialect === 'sqlite' ? claimTasksSqlite(h, claim) : claimTasksPostgres(h, claim);
  try {
    const result = await executeCached(
      h,
      `claimTasks:${claim.regions?.length ?? 'all'}`,
      statement.parameters,
      () => ({ compile: () => statement.query.compile(h.db) }),
    );
    return result.rows
      .map((r) => rowToClaimedTask(h.codec, r))
      .sort((a, b) => (a.taskIndex ?? 0) - (b.taskIndex ?? 0));
  } catch (error) {
    throw translateDriverError(error, 'claim tasks');
  }
}
