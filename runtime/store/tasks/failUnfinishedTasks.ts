import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** Fail every unfinished task of a group (a PARALLEL timeout); returns how many. */
export async function failUnfinishedTasks(
  h: StoreHandle,
  workflowId: string,
  group: string,
  error: string,
  now: Date,
): Promise<number> {
  try {
    const r = await h.db
      .updateTable('tasks')
      .set({ status: 'FAILED', error, completed_at: h.codec.time(now), lease_expires_at: null })
      .where('workflow_id', '=', workflowId)
      .where('parallel_group', '=', group)
      .where('status', 'in', ['PENDING', 'CLAIMED'])
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  } catch (cause) {
    throw translateDriverError(cause, 'fail unfinished tasks');
  }
}
