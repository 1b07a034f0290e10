import { executeCachedRows } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { StoreHandle } from '../store.js';

/** A numeric observation about a workflow step (e.g. its duration). */
export interface WorkflowMetric {
  workflowId: string;
  workflowType?: string | null;
  stepName?: string | null;
  name: string;
  value: number;
  unit?: string | null;
  tags?: Record<string, unknown>;
  at?: Date;
}

/** Record metrics in one statement. */
export async function recordMetrics(
  h: StoreHandle,
  metrics: readonly WorkflowMetric[],
): Promise<void> {
  if (metrics.length === 0) return;
  const now = new Date();
  const rows = metrics.map((m) => ({
    workflow_id: m.workflowId,
    workflow_type: m.workflowType ?? null,
    step_name: m.stepName ?? null,
    metric_name: m.name,
    metric_value: m.value,
    unit: m.unit ?? null,
    tags: h.codec.json(m.tags ?? {}),
    recorded_at: h.codec.time(m.at ?? now),
  }));
  try {
    await executeCachedRows(h, 'recordMetrics', rows, () =>
      h.db.insertInto('workflow_metrics').values(rows),
    );
  } catch (error) {
    throw translateDriverError(error, 'record metrics');
  }
}
