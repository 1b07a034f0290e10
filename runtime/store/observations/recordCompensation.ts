import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** One saga compensation attempt. */
export interface CompensationEntry {
  workflowId: string;
  stepName: string;
  compensationFunction: string;
  status: 'STARTED' | 'COMPLETED' | 'FAILED';
  stateBefore?: Record<string, unknown> | null;
  stateAfter?: Record<string, unknown> | null;
  error?: string | null;
  at?: Date;
}

/** Record a compensation attempt in compensation_log. */
export async function recordCompensation(h: StoreHandle, entry: CompensationEntry): Promise<void> {
  const json = (v: Record<string, unknown> | null | undefined) =>
    v == null ? null : h.codec.json(v);
  try {
    await h.db
      .insertInto('compensation_log')
      .values({
        workflow_id: entry.workflowId,
        step_name: entry.stepName,
        compensation_function: entry.compensationFunction,
        status: entry.status,
        state_before: json(entry.stateBefore),
        state_after: json(entry.stateAfter),
        error: entry.error ?? null,
        executed_at: h.codec.time(entry.at ?? new Date()),
      })
      .execute();
  } catch (error) {
    throw translateDriverError(error, 'record compensation');
  }
}
