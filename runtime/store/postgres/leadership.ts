/**
 * Cluster-wide "only one at a time" for the scheduler and the zombie scanner: a PostgreSQL
 * session advisory lock, held on one pooled connection for the duration of the work. A node
 * that does not get the lock skips the round; another node is doing it.
 *
 * Advisory locks are database-wide, so the key is derived from the schema the store uses
 * as well as the job's name: two deployments in different schemas of one database each
 * elect their own leader instead of silently taking turns.
 */
import type { Pool } from 'pg';

/** Run `work` if this node gets the lock `name`; returns undefined when another node holds it. */
export async function withAdvisoryLock<T>(
  pool: Pool,
  name: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  const client = await pool.connect();
  try {
    const got = await client.query<{ ok: boolean; key: string }>(
      `SELECT pg_try_advisory_lock(k) AS ok, k::text AS key
         FROM (SELECT hashtextextended(current_schema() || '/' || $1::text, 0) AS k) AS lock`,
      [name],
    );
    const row = got.rows[0];
    if (row?.ok !== true) return undefined;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [row.key]);
    }
  } finally {
    client.release();
  }
}
