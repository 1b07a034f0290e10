import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A timer that is due. */
export interface DueTimer {
  id: string;
  workflowId: string;
  kind: string;
  stepName: string | null;
  payload: Record<string, unknown>;
  dueAt: Date;
}

/** PENDING timers of `kinds` due at `now` (of one workflow, with `workflowId`), oldest first. */
export async function listDueTimers(
  h: StoreHandle,
  kinds: readonly string[],
  now: Date,
  limit = 100,
  workflowId?: string,
): Promise<DueTimer[]> {
  try {
    let query = h.db
      .selectFrom('workflow_timers')
      .selectAll()
      .where('status', '=', 'PENDING')
      .where('timer_kind', 'in', kinds)
      .where('due_at', '<=', h.codec.time(now));
    if (workflowId !== undefined) query = query.where('workflow_id', '=', workflowId);
    const rows = await query.orderBy('due_at').limit(limit).execute();
    return rows.map((r) => ({
      id: r.id,
      workflowId: r.workflow_id,
      kind: r.timer_kind,
      stepName: r.step_name,
      payload: h.codec.parseJson(r.payload) as Record<string, unknown>,
      dueAt: h.codec.parseTime(r.due_at),
    }));
  } catch (error) {
    throw translateDriverError(error, 'list due timers');
  }
}

/** Mark one timer FIRED; false when it was no longer PENDING (someone else fired it). */
export async function fireTimer(h: StoreHandle, id: string): Promise<boolean> {
  const r = await h.db
    .updateTable('workflow_timers')
    .set({ status: 'FIRED' })
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
  return r.numUpdatedRows === 1n;
}
