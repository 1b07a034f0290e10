/**
 * Wake-ups for workers: a commit that queues tasks sends NOTIFY on `saffron_tasks` (delivered
 * when the transaction commits), and idle workers LISTEN on a dedicated connection instead of
 * polling hard; polling remains as the fallback for lost connections and for SQLite.
 */
import { sql } from 'kysely';
import type { Pool, PoolClient } from 'pg';
import type { StoreHandle } from '../store.js';

/** The channel task notifications use. */
export const TASKS_CHANNEL = 'saffron_tasks';

/** Queue a notification in the caller's transaction (PostgreSQL and PGlite). */
export async function notifyTasks(h: StoreHandle): Promise<void> {
  if (h.dialect === 'sqlite') return;
  await sql`SELECT pg_notify(${TASKS_CHANNEL}, '')`.execute(h.db);
}

/** Listen on a dedicated connection; returns a function that stops listening. */
export async function listenForTasks(
  pool: Pool,
  onNotify: () => void,
): Promise<() => Promise<void>> {
  const client: PoolClient = await pool.connect();
  const handler = (message: { channel: string }) => {
    if (message.channel === TASKS_CHANNEL) onNotify();
  };
  client.on('notification', handler);
  client.on('error', () => onNotify());
  await client.query(`LISTEN ${TASKS_CHANNEL}`);
  return async () => {
    client.off('notification', handler);
    try {
      await client.query(`UNLISTEN ${TASKS_CHANNEL}`);
    } finally {
      client.release();
    }
  };
}
