/**
 * Workflows under chaos: once the run has drained, every workflow — in the cloud database
 * and on every device — is terminal or legitimately waiting (for a person's input, or
 * paused by an operator); none is stuck ACTIVE or waiting for a task or a child that will
 * never come. Every cloud workflow the operators' API calls confirmed exists exactly once
 * (its idempotency key held once, whatever the number of repeated starts), no task is left
 * unfinished, and the run's own cloud workflows all COMPLETED.
 */
import { sql } from 'kysely';
import {
  EDGE_SUMMARY_SOURCE,
  TERMINAL_WORKFLOW_STATUSES,
  type Store,
} from '../../../runtime/index.js';
import { CLOUD_FLOW_TYPE } from '../cloudFlow.js';
import type { DeviceFacts } from './deviceFiles.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';

/** Statuses a drained workflow may have. */
const SETTLED = new Set<string>([...TERMINAL_WORKFLOW_STATUSES, 'WAITING_HUMAN_INPUT', 'PAUSED']);

/** A cloud workflow row as the checks read it. */
export interface CloudWorkflowRow {
  id: string;
  workflow_type: string;
  status: string;
  idempotency_key: string | null;
}

/** The cloud's own workflows (not the summaries of device workflows: summaries.ts). */
export async function readCloudWorkflows(store: Store): Promise<CloudWorkflowRow[]> {
  return store.db
    .selectFrom('workflow_executions')
    .select(['id', 'workflow_type', 'status', 'idempotency_key'])
    .where(sql<string>`coalesce(metadata->>'source', '')`, '<>', EDGE_SUMMARY_SOURCE)
    .execute();
}

/** Check the workflow invariant. */
export async function checkWorkflows(
  store: Store,
  cloud: readonly CloudWorkflowRow[],
  facts: readonly DeviceFacts[],
  startedKeys: readonly string[],
): Promise<InvariantResult> {
  const v = new Violations();
  const cloudByStatus: Record<string, number> = {};
  const keys = new Map<string, number>();
  for (const w of cloud) {
    cloudByStatus[w.status] = (cloudByStatus[w.status] ?? 0) + 1;
    if (!SETTLED.has(w.status)) v.add('cloud workflow not settled', `${w.id} (${w.status})`);
    if (w.workflow_type === CLOUD_FLOW_TYPE && w.status !== 'COMPLETED')
      v.add('chaos workflow did not complete', `${w.id} (${w.status})`);
    if (w.idempotency_key) keys.set(w.idempotency_key, (keys.get(w.idempotency_key) ?? 0) + 1);
  }
  for (const key of startedKeys) {
    const n = keys.get(key) ?? 0;
    if (n !== 1) v.add('confirmed start not held exactly once', `${key} ×${n}`);
  }
  const tasks = await store.db
    .selectFrom('tasks')
    .select(['id', 'status'])
    .where('status', 'in', ['PENDING', 'CLAIMED'])
    .execute();
  for (const t of tasks) v.add('task left unfinished', `${t.id} (${t.status})`);

  const deviceByStatus: Record<string, number> = {};
  const failedAt = new Map<string, { n: number; example: string }>();
  for (const device of facts)
    for (const w of device.workflows) {
      deviceByStatus[w.status] = (deviceByStatus[w.status] ?? 0) + 1;
      if (w.status === 'FAILED') {
        const step = w.failure?.step ?? '?';
        const seen = failedAt.get(step) ?? { n: 0, example: w.failure?.error ?? '' };
        seen.n++;
        failedAt.set(step, seen);
      }
      if (!SETTLED.has(w.status))
        v.add('device workflow not settled', `${device.deviceId}/${w.id} (${w.status})`);
    }
  const figures: Record<string, number | string> = {
    cloud_workflows: cloud.length,
    chaos_workflows_confirmed: startedKeys.length,
    device_workflows: Object.values(deviceByStatus).reduce((n, x) => n + x, 0),
  };
  for (const [s, n] of Object.entries(cloudByStatus)) figures[`cloud_${s}`] = n;
  for (const [s, n] of Object.entries(deviceByStatus)) figures[`device_${s}`] = n;
  // failed payments are a legitimate end (a dead acquirer link, a killed WASM thread), but
  // say where they failed and why
  if (failedAt.size > 0)
    figures.device_failed_at = [...failedAt]
      .map(([step, f]) => `${step} ×${f.n} (e.g. ${f.example})`)
      .join('; ');
  return invariant('every workflow terminal or legitimately waiting', figures, v);
}
