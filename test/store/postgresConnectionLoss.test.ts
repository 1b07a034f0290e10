/**
 * A PostgreSQL store survives its server dropping a connection that is checked out — what a
 * PostgreSQL restart does to every busy connection at once (the chaos run, test/chaos, found
 * gateways and workers dying of it): the query on it fails, the process does not crash on an
 * unhandled 'error' event, and the pool goes on with fresh connections.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { adminQuery, DIALECTS } from '../support/stores.js';

const postgres = DIALECTS.find((d) => d.name === 'postgres');

describe.runIf(postgres)('postgres connection loss', () => {
  it('fails the query on a terminated connection and keeps serving on new ones', async () => {
    const handle = await postgres!.open();
    try {
      const { store } = handle;
      const outcome = store.transaction(async (tx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(tx.db);
        await adminQuery(`SELECT pg_terminate_backend(${Number(rows[0]!.pid)})`);
        // the server closed this connection: the pool client emits 'error' in between
        await new Promise((resolve) => setTimeout(resolve, 200));
        await sql`SELECT 1`.execute(tx.db);
      });
      await expect(outcome).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(store.db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await handle.close();
    }
  });
});
