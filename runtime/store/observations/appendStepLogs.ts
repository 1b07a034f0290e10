import type { LogLevel } from '../../model/statuses.js';
import { executeCachedRows } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A line a step logged through `context.log`. */
export interface StepLog {
  workflowId: string;
  stepName?: string | null;
  level: LogLevel;
  message: string;
  data?: Record<string, unknown>;
  at?: Date;
}

/** Append step log lines in one statement. */
export async function appendStepLogs(h: StoreHandle, logs: readonly StepLog[]): Promise<void> {
  if (logs.length === 0) return;
  const now = new Date();
  const rows = logs.map((l) => ({
    workflow_id: l.workflowId,
    step_name: l.stepName ?? null,
    level: l.level,
    message: l.message,
    data: h.codec.json(l.data ?? {}),
    logged_at: h.codec.time(l.at ?? now),
  }));
  try {
    await executeCachedRows(h, 'appendStepLogs', rows, () =>
      h.db.insertInto('workflow_execution_logs').values(rows),
    );
  } catch (error) {
    throw translateDriverError(error, 'append step logs');
  }
}
