/**
 * Cluster-wide "only one at a time" for the scheduler and the zombie scanner: a PostgreSQL
 * session advisory lock, held on one pooled connection for the duration of the work. A node
 * that does not get the lock skips the round; another node is doing it.
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

/** A stable 63-bit lock key for a name. */
export function advisoryKey(name: string): string {
  return BigInt.asIntN(
    64,
    BigInt(`0x${createHash('sha256').update(name).digest('hex').slice(0, 16)}`),
  ).toString();
}

/** Run `work` if this node gets the lock `name`; returns undefined when another node holds it. */
export async function withAdvisoryLock<T>(
  pool: Pool,
  name: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  const client = await pool.connect();
  const key = advisoryKey(name);
  try {
    const got = await client.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_lock($1::bigint) AS ok',
      [key],
    );
    if (got.rows[0]?.ok !== true) return undefined;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    }
  } finally {
    client.release();
  }
}
