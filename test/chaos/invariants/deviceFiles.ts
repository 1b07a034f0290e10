/**
 * What the terminals' SQLite files hold at the end of the run (agents stopped): their SAF
 * records, their workflows with the payment decision, the audit rows per workflow and the
 * command ledger (`edge_sync_state` keys `command:<id>`). Read once per file, so each check
 * works on the same facts.
 */
import { sql } from 'kysely';
import { COMMAND_KEY_PREFIX } from '../../../edge/state/syncState.js';
import type { CommandLedgerEntry } from '../../../edge/commands/commandLedger.js';
import { asEdge, openStore } from '../../../runtime/index.js';

/** A SAF record on a device. */
export interface DeviceSafRecord {
  workflowId: string;
  sequence: number;
  signature: string;
  status: string;
  /** Uploads that carried it (more than one: the cloud was sent it again). */
  uploadAttempts: number;
}

/** A workflow on a device. */
export interface DeviceWorkflow {
  id: string;
  type: string;
  status: string;
  /** `state.decision` of a payment: status and mode (ONLINE / OFFLINE). */
  decision: { status?: unknown; mode?: unknown } | undefined;
  /** Audit rows by event type. */
  audit: Record<string, number>;
  /** The last failed step and its error, for a workflow that has one. */
  failure?: { step: string | null; error: string };
}

/** Everything read from one device file. */
export interface DeviceFacts {
  deviceId: string;
  records: DeviceSafRecord[];
  workflows: DeviceWorkflow[];
  /** Ledger entries by command id. */
  ledger: Map<string, CommandLedgerEntry>;
}

/** Read one device's file. */
export async function readDeviceFacts(deviceId: string, file: string): Promise<DeviceFacts> {
  const store = asEdge(await openStore(file));
  try {
    const { edge: db, codec } = store;
    const records = await db
      .selectFrom('saf_pending_transactions')
      .select(['workflow_id', 'sequence_number', 'signature', 'status', 'upload_attempts'])
      .execute();
    const rows = await db
      .selectFrom('workflow_executions')
      .select(['id', 'workflow_type', 'status', 'state'])
      .execute();
    const audit = await db
      .selectFrom('workflow_audit_log')
      .select(['workflow_id', 'event_type', sql<number>`COUNT(*)`.as('n')])
      .groupBy(['workflow_id', 'event_type'])
      .execute();
    const failures = await db
      .selectFrom('workflow_audit_log')
      .select(['workflow_id', 'step_name', 'event_data'])
      .where('event_type', '=', 'STEP_FAILED')
      .orderBy('id')
      .execute();
    const failureOf = new Map<string, DeviceWorkflow['failure']>();
    for (const f of failures) {
      const data = codec.parseJson(f.event_data) as { error?: unknown; message?: unknown };
      const error = data.error ?? data.message ?? '';
      failureOf.set(f.workflow_id, {
        step: f.step_name,
        error: (typeof error === 'string' ? error : JSON.stringify(error)).slice(0, 160),
      });
    }
    const ledgerRows = await db
      .selectFrom('edge_sync_state')
      .select(['key', 'value'])
      .where('key', 'like', `${COMMAND_KEY_PREFIX}%`)
      .execute();
    const auditOf = new Map<string, Record<string, number>>();
    for (const a of audit) {
      const entry = auditOf.get(a.workflow_id) ?? {};
      entry[a.event_type] = Number(a.n);
      auditOf.set(a.workflow_id, entry);
    }
    return {
      deviceId,
      records: records.map((r) => ({
        workflowId: r.workflow_id,
        sequence: Number(r.sequence_number),
        signature: r.signature,
        status: r.status,
        uploadAttempts: Number(r.upload_attempts),
      })),
      workflows: rows.map((r) => {
        const state = codec.parseJson(r.state) as { decision?: DeviceWorkflow['decision'] };
        return {
          id: r.id,
          type: r.workflow_type,
          status: r.status,
          decision: state.decision,
          audit: auditOf.get(r.id) ?? {},
          ...(failureOf.has(r.id) ? { failure: failureOf.get(r.id) } : {}),
        };
      }),
      ledger: new Map(
        ledgerRows.map((r) => [
          r.key.slice(COMMAND_KEY_PREFIX.length),
          codec.parseJson(r.value) as CommandLedgerEntry,
        ]),
      ),
    };
  } finally {
    await store.close();
  }
}
