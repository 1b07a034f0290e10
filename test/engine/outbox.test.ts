/**
 * The settled-workflow outbox: rows an embedder writes in the same transaction as a
 * workflow's terminal status — both or neither survive a crash at the commit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { SimulatedCrash } from '../../runtime/index.js';
import { definition, engineFor } from '../support/engine.js';
import { DIALECTS, openWithSchema, rawExec, type TestStore } from '../support/stores.js';

const FLOW = `
workflow_type: settle_me
automate_next: true
steps:
  - { name: one, type: STANDARD, function: steps.mark }
  - { name: two, type: STANDARD, function: steps.mark }
`;

for (const dialect of DIALECTS) {
  describe(`settled outbox on ${dialect.name}`, () => {
    let handle: TestStore;
    beforeEach(async () => {
      handle = await openWithSchema(dialect);
      await rawExec(
        handle,
        'CREATE TABLE settled_side (workflow_id TEXT PRIMARY KEY, status TEXT)',
      );
    });
    afterEach(async () => {
      await handle.close();
    });
    const sideRows = async () =>
      (
        await sql<{
          workflow_id: string;
          status: string;
        }>`SELECT workflow_id, status FROM settled_side`.execute(handle.store.db)
      ).rows;

    it('writes the embedder’s rows with the terminal commit, once', async () => {
      const calls: string[] = [];
      const rt = engineFor(handle, {
        onSettled: ({ record, status, state }) => {
          calls.push(`${record.id}:${status}`);
          expect(state.visited).toEqual(['one', 'two']);
          return async (tx) => {
            await sql`INSERT INTO settled_side (workflow_id, status) VALUES (${record.id}, ${status})`.execute(
              tx.db,
            );
          };
        },
      });
      const wf = await rt.start(await definition(FLOW));
      expect(wf.status).toBe('COMPLETED');
      expect(calls).toEqual([`${wf.id}:COMPLETED`]);
      expect(await sideRows()).toEqual([{ workflow_id: wf.id, status: 'COMPLETED' }]);
      await rt.close();
    });

    it('loses both the status and the rows when the terminal commit fails', async () => {
      const rt = engineFor(handle, {
        faults: (point, at) => {
          if (point === 'before-commit' && at.stepName === 'two')
            throw new SimulatedCrash('power cut');
        },
        onSettled:
          ({ record }) =>
          async (tx) => {
            await sql`INSERT INTO settled_side (workflow_id, status) VALUES (${record.id}, 'x')`.execute(
              tx.db,
            );
          },
      });
      await expect(rt.start(await definition(FLOW))).rejects.toBeInstanceOf(SimulatedCrash);
      expect(await sideRows()).toEqual([]);
      const [wf] = await rt.list({});
      expect(wf?.status).toBe('ACTIVE');
      await rt.close().catch(() => undefined);
    });

    it('fails the commit — and so the status — when the outbox write fails', async () => {
      const rt = engineFor(handle, {
        onSettled: () => async (tx) => {
          await sql`INSERT INTO no_such_table VALUES (1)`.execute(tx.db);
        },
      });
      await expect(rt.start(await definition(FLOW))).rejects.toThrow();
      const [wf] = await rt.list({});
      expect(wf?.status).toBe('ACTIVE');
      expect(wf?.currentStep).toBe('two');
      await rt.close().catch(() => undefined);
    });
  });
}
