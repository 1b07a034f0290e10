/**
 * When the next PENDING timer of one workflow falls due: a process that drives a workflow
 * to its end without a maintenance loop (`saffron run`) waits for exactly that moment.
 */
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** The due time of the earliest PENDING timer of `kinds` of `workflowId`; undefined when none. */
export async function nextTimerDue(
  h: StoreHandle,
  workflowId: string,
  kinds: readonly string[],
): Promise<Date | undefined> {
  try {
    const row = await h.db
      .selectFrom('workflow_timers')
      .select('due_at')
      .where('workflow_id', '=', workflowId)
      .where('status', '=', 'PENDING')
      .where('timer_kind', 'in', kinds)
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : h.codec.parseTime(row.due_at);
  } catch (error) {
    throw translateDriverError(error, 'read the next timer');
  }
}
