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

/**
 * Keep a live worker's claims: push the lease of every task `workerId` holds to at least
 * `until`, so a task that runs longer than one lease is not taken over while its worker is
 * alive. Returns how many leases it pushed.
 */
export async function renewTaskLeases(
  h: StoreHandle,
  workerId: string,
  until: Date,
): Promise<number> {
  try {
    const result = await h.db
      .updateTable('tasks')
      .set({ lease_expires_at: h.codec.time(until) })
      .where((eb) =>
        eb.and([
          eb('worker_id', '=', workerId),
          eb('status', '=', 'CLAIMED'),
          eb('lease_expires_at', '<', h.codec.time(until)),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  } catch (error) {
    throw translateDriverError(error, `renew the task leases of worker ${workerId}`);
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
