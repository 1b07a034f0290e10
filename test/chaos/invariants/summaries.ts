/**
 * Workflow summaries under chaos: every summary the cloud holds is of a workflow that ended
 * on the device that owns it, with the status it ended with there, and none is held twice.
 * Completeness is reported, not required: a device uploads summaries after its SAF queue on
 * each sync round, and the run stops the agents once the queues are empty, so workflows that
 * ended online after a device's last round are still on the device.
 */
import { sql } from 'kysely';
import {
  EDGE_SUMMARY_SOURCE,
  TERMINAL_WORKFLOW_STATUSES,
  type Store,
} from '../../../runtime/index.js';
import type { DeviceFacts } from './deviceFiles.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';

const ENDED = new Set<string>(TERMINAL_WORKFLOW_STATUSES);

/** Check the summaries invariant. */
export async function checkSummaries(
  store: Store,
  facts: readonly DeviceFacts[],
): Promise<InvariantResult> {
  const v = new Violations();
  const rows = await store.db
    .selectFrom('workflow_executions')
    .select(['id', 'owner_id', 'status'])
    .where(sql<string>`coalesce(metadata->>'source', '')`, '=', EDGE_SUMMARY_SOURCE)
    .execute();
  const devices = new Map(
    facts.map((f) => [f.deviceId, new Map(f.workflows.map((w) => [w.id, w]))]),
  );
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.id)) v.add('summary held twice', row.id);
    seen.add(row.id);
    const workflow = devices.get(row.owner_id ?? '')?.get(row.id);
    if (!workflow) v.add('summary of no workflow of its device', `${row.owner_id}/${row.id}`);
    else if (workflow.status !== row.status)
      v.add(
        'summary status differs from the device',
        `${row.owner_id}/${row.id} (cloud ${row.status}, device ${workflow.status})`,
      );
  }
  const ended = facts.reduce(
    (n, f) => n + f.workflows.filter((w) => ENDED.has(w.status)).length,
    0,
  );
  return invariant(
    'every workflow summary matches its device',
    { summaries: rows.length, device_workflows_ended: ended },
    v,
  );
}
