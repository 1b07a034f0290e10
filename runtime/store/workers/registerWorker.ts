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
