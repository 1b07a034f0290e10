/**
 * The audit trail under chaos: every workflow transition and every command has its audit
 * rows, written in the transaction of the change, so a crash can lose neither alone.
 *
 * Workflows (cloud `workflow_audit_log` and each device's): one WORKFLOW_STARTED; a terminal
 * workflow has exactly one row of its ending (COMPLETED, FAILED for both failed statuses,
 * CANCELLED) and no other ending; a workflow still waiting has none. The run's cloud
 * workflows, all COMPLETED, also have exactly the rows their three steps produce (one
 * STEP_EXECUTED per step, one TASK_DISPATCHED and one TASK_COMPLETED for the ASYNC step),
 * however often a killed worker or gateway made a step run again.
 *
 * Commands (`command_audit_log`): one COMMAND_CREATED; one COMMAND_DELIVERED at least when
 * the device got it; an EXECUTED command exactly one COMMAND_EXECUTED, a FAILED one exactly
 * one COMMAND_FAILED or COMMAND_EXPIRED.
 */
import { sql } from 'kysely';
import type { Store, CloudStore } from '../../../runtime/index.js';
import { CLOUD_FLOW_EXPECTED_AUDIT, CLOUD_FLOW_STEPS, CLOUD_FLOW_TYPE } from '../cloudFlow.js';
import type { CommandRow } from './commands.js';
import type { DeviceFacts } from './deviceFiles.js';
import { invariant, Violations, type InvariantResult } from './invariant.js';
import type { CloudWorkflowRow } from './workflows.js';

const ENDINGS = ['WORKFLOW_COMPLETED', 'WORKFLOW_FAILED', 'WORKFLOW_CANCELLED'] as const;

const ENDING_OF: Record<string, (typeof ENDINGS)[number]> = {
  COMPLETED: 'WORKFLOW_COMPLETED',
  FAILED: 'WORKFLOW_FAILED',
  FAILED_ROLLED_BACK: 'WORKFLOW_FAILED',
  CANCELLED: 'WORKFLOW_CANCELLED',
};

/** Rows per event type of one workflow (or command). */
type Counts = Record<string, number>;

function checkTrail(v: Violations, where: string, status: string, audit: Counts): void {
  const n = (event: string) => audit[event] ?? 0;
  if (n('WORKFLOW_STARTED') !== 1)
    v.add('WORKFLOW_STARTED not exactly once', `${where} ×${n('WORKFLOW_STARTED')}`);
  const ending = ENDING_OF[status];
  for (const e of ENDINGS) {
    const expected = e === ending ? 1 : 0;
    if (n(e) !== expected) v.add(`${e} ×${n(e)} for a ${status} workflow`, where);
  }
}

async function cloudAudit(store: Store): Promise<Map<string, Counts>> {
  const rows = await store.db
    .selectFrom('workflow_audit_log')
    .select(['workflow_id', 'event_type', 'step_name', sql<number>`COUNT(*)`.as('n')])
    .groupBy(['workflow_id', 'event_type', 'step_name'])
    .execute();
  const byWorkflow = new Map<string, Counts>();
  for (const r of rows) {
    const counts = byWorkflow.get(r.workflow_id) ?? {};
    counts[r.event_type] = (counts[r.event_type] ?? 0) + Number(r.n);
    if (r.event_type === 'STEP_EXECUTED' && r.step_name)
      counts[`STEP_EXECUTED:${r.step_name}`] = Number(r.n);
    byWorkflow.set(r.workflow_id, counts);
  }
  return byWorkflow;
}

async function commandAudit(store: CloudStore): Promise<Map<string, Counts>> {
  const rows = await store.cloud
    .selectFrom('command_audit_log')
    .select(['command_id', 'event_type', sql<number>`COUNT(*)`.as('n')])
    .where('command_id', 'is not', null)
    .groupBy(['command_id', 'event_type'])
    .execute();
  const byCommand = new Map<string, Counts>();
  for (const r of rows) {
    const counts = byCommand.get(r.command_id!) ?? {};
    counts[r.event_type] = Number(r.n);
    byCommand.set(r.command_id!, counts);
  }
  return byCommand;
}

/** Check the audit invariant. */
export async function checkAudit(
  store: CloudStore,
  workflows: readonly CloudWorkflowRow[],
  commands: readonly CommandRow[],
  facts: readonly DeviceFacts[],
): Promise<InvariantResult> {
  const v = new Violations();
  const trails = await cloudAudit(store);
  let cloudRows = 0;
  for (const w of workflows) {
    const audit = trails.get(w.id) ?? {};
    cloudRows += Object.entries(audit)
      .filter(([k]) => !k.includes(':'))
      .reduce((n, [, x]) => n + x, 0);
    checkTrail(v, `cloud ${w.id}`, w.status, audit);
    if (w.workflow_type !== CLOUD_FLOW_TYPE || w.status !== 'COMPLETED') continue;
    for (const [event, expected] of Object.entries(CLOUD_FLOW_EXPECTED_AUDIT))
      if ((audit[event] ?? 0) !== expected)
        v.add(
          `${event} not exactly ${expected} in a chaos workflow`,
          `${w.id} ×${audit[event] ?? 0}`,
        );
    for (const step of CLOUD_FLOW_STEPS)
      if ((audit[`STEP_EXECUTED:${step}`] ?? 0) !== 1)
        v.add(
          `step ${step} not recorded exactly once`,
          `${w.id} ×${audit[`STEP_EXECUTED:${step}`] ?? 0}`,
        );
  }
  let deviceRows = 0;
  let deviceWorkflows = 0;
  for (const device of facts)
    for (const w of device.workflows) {
      deviceWorkflows++;
      deviceRows += Object.values(w.audit).reduce((n, x) => n + x, 0);
      checkTrail(v, `${device.deviceId}/${w.id}`, w.status, w.audit);
    }

  const commandTrails = await commandAudit(store);
  let commandRows = 0;
  for (const c of commands) {
    const audit = commandTrails.get(c.command_id) ?? {};
    commandRows += Object.values(audit).reduce((n, x) => n + x, 0);
    const n = (event: string) => audit[event] ?? 0;
    if (n('COMMAND_CREATED') !== 1)
      v.add('COMMAND_CREATED not exactly once', `${c.command_id} ×${n('COMMAND_CREATED')}`);
    if (c.delivered_at !== null && n('COMMAND_DELIVERED') < 1)
      v.add('delivered without COMMAND_DELIVERED', c.command_id);
    if (c.status === 'EXECUTED' && n('COMMAND_EXECUTED') !== 1)
      v.add(
        'EXECUTED without exactly one COMMAND_EXECUTED',
        `${c.command_id} ×${n('COMMAND_EXECUTED')}`,
      );
    if (c.status === 'FAILED' && n('COMMAND_FAILED') + n('COMMAND_EXPIRED') !== 1)
      v.add('FAILED without exactly one COMMAND_FAILED/EXPIRED', c.command_id);
    if (c.status !== 'EXECUTED' && n('COMMAND_EXECUTED') !== 0)
      v.add(`COMMAND_EXECUTED on a ${c.status} command`, c.command_id);
  }
  return invariant(
    'audit rows for every workflow transition and command',
    {
      cloud_workflow_audit_rows: cloudRows,
      device_workflows_checked: deviceWorkflows,
      device_workflow_audit_rows: deviceRows,
      command_audit_rows: commandRows,
    },
    v,
  );
}
