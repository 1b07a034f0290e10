import { sql } from 'kysely';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A worker node as registered in worker_nodes (cloud stores). */
export interface WorkerNode {
  workerId: string;
  hostname: string;
  pid: number;
  concurrency: number;
  capabilities: Record<string, unknown>;
}

/** Register (or re-register) a worker node as ACTIVE. */
export async function registerWorker(h: StoreHandle, node: WorkerNode, now: Date): Promise<void> {
  const at = h.codec.time(now);
  try {
    await sql`
      INSERT INTO worker_nodes (worker_id, hostname, pid, status, capabilities, concurrency, last_heartbeat, started_at)
      VALUES (${node.workerId}, ${node.hostname}, ${node.pid}, 'ACTIVE', ${h.codec.json(node.capabilities)}, ${node.concurrency}, ${at}, ${at})
      ON CONFLICT (worker_id) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid, status = 'ACTIVE',
        capabilities = excluded.capabilities, concurrency = excluded.concurrency,
        last_heartbeat = excluded.last_heartbeat, started_at = excluded.started_at`.execute(h.db);
  } catch (error) {
    throw translateDriverError(error, `register worker ${node.workerId}`);
  }
}

/** Refresh a worker's heartbeat, or set its final status when it stops. */
export async function touchWorker(
  h: StoreHandle,
  workerId: string,
  now: Date,
  status: 'ACTIVE' | 'STOPPED' = 'ACTIVE',
): Promise<void> {
  try {
    await sql`UPDATE worker_nodes SET last_heartbeat = ${h.codec.time(now)}, status = ${status} WHERE worker_id = ${workerId}`.execute(
      h.db,
    );
  } catch (error) {
    throw translateDriverError(error, `heartbeat of worker ${workerId}`);
  }
}

/** What {@link keepTaskClaims} is told about a worker's claims. */
export interface HeldClaims {
  workerId: string;
  /** The tasks the worker is running right now. */
  running: readonly string[];
  /** Their leases are pushed to at least this. */
  until: Date;
  /** A task the worker holds but is not running, claimed before this, is an orphan. */
  orphanedBefore: Date;
  now: Date;
}

/**
 * Keep a live worker's claims, and give up the ones it lost track of.
 *
 * - The leases of the tasks it runs are pushed to at least `until`, so a task that runs
 *   longer than one lease is not taken over while its worker is alive.
 * - A task the database says it holds but it is not running — the claim committed and its
 *   answer was lost with the connection (a database restart) — gets its lease ended now, so
 *   another claim takes it over instead of waiting out the lease. Only claims older than
 *   `orphanedBefore` count: a claim whose answer is still on its way is not an orphan.
 *
 * - A task it runs that the database no longer has as its claim — the lease ran out and
 *   another worker took the task over, or its step ended without it (a PARALLEL timeout, the
 *   workflow deleted) — is `lost`: the worker should stop it, and its outcome will not be
 *   recorded.
 *
 * Returns how many leases were renewed and how many orphans released, and the lost tasks.
 */
export async function keepTaskClaims(
  h: StoreHandle,
  claims: HeldClaims,
): Promise<{ renewed: number; released: number; lost: string[] }> {
  const until = h.codec.time(claims.until);
  const now = h.codec.time(claims.now);
  try {
    let renewed = 0;
    const lost: string[] = [];
    if (claims.running.length > 0) {
      const result = await h.db
        .updateTable('tasks')
        .set({ lease_expires_at: until })
        .where((eb) =>
          eb.and([
            eb('id', 'in', [...claims.running]),
            eb('worker_id', '=', claims.workerId),
            eb('status', '=', 'CLAIMED'),
            eb('lease_expires_at', '<', until),
          ]),
        )
        .executeTakeFirst();
      renewed = Number(result.numUpdatedRows);
      const held = await h.db
        .selectFrom('tasks')
        .select('id')
        .where((eb) =>
          eb.and([
            eb('id', 'in', [...claims.running]),
            eb('worker_id', '=', claims.workerId),
            eb('status', '=', 'CLAIMED'),
          ]),
        )
        .execute();
      const still = new Set(held.map((r) => r.id));
      for (const id of claims.running) if (!still.has(id)) lost.push(id);
    }
    const orphans = await h.db
      .updateTable('tasks')
      .set({ lease_expires_at: now })
      .where((eb) =>
        eb.and([
          eb('worker_id', '=', claims.workerId),
          eb('status', '=', 'CLAIMED'),
          eb('claimed_at', '<', h.codec.time(claims.orphanedBefore)),
          eb('lease_expires_at', '>', now),
          ...(claims.running.length > 0 ? [eb('id', 'not in', [...claims.running])] : []),
        ]),
      )
      .executeTakeFirst();
    return { renewed, released: Number(orphans.numUpdatedRows), lost };
  } catch (error) {
    throw translateDriverError(error, `keep the task claims of worker ${claims.workerId}`);
  }
}

/**
 * Declare dead the workers whose heartbeat is older than `staleBefore` (the process was
 * killed, or its machine lost), and end the leases of the tasks they held, so the next claim
 * takes them over at once instead of after the rest of a long lease. One statement; a worker
 * that was only slow sets itself ACTIVE again with its next heartbeat, and a task it still
 * finishes before another worker claims it is recorded as usual.
 */
export async function releaseDeadWorkers(
  h: StoreHandle,
  staleBefore: Date,
  now: Date,
): Promise<{ workers: number; tasks: number }> {
  const at = h.codec.time(now);
  try {
    const { rows } = await sql<{ workers: number | string; tasks: number | string }>`
      WITH dead AS (
        UPDATE worker_nodes SET status = 'DEAD'
        WHERE status IN ('ACTIVE', 'DRAINING') AND last_heartbeat < ${h.codec.time(staleBefore)}
        RETURNING worker_id),
      released AS (
        UPDATE tasks SET lease_expires_at = ${at}
        WHERE status = 'CLAIMED' AND lease_expires_at > ${at}
          AND worker_id IN (SELECT worker_id FROM dead)
        RETURNING id)
      SELECT (SELECT count(*) FROM dead) AS workers, (SELECT count(*) FROM released) AS tasks`.execute(
      h.db,
    );
    const row = rows[0];
    return { workers: Number(row?.workers ?? 0), tasks: Number(row?.tasks ?? 0) };
  } catch (error) {
    throw translateDriverError(error, 'release the tasks of dead workers');
  }
}
