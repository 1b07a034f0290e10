/**
 * Keep the summaries of workflows that ended on a device (runtime/saf/summary.ts) as
 * `workflow_executions` rows of the cloud, in one transaction per upload (cloud tier):
 *
 * - a new id → a row with the summary's status, step, state and times, `owner_id` the
 *   device and `metadata` `{source: 'edge', device_id, synced_at}` (plus `state_omitted`);
 *   no definition, actor snapshot or heartbeat: the cloud never runs it → `stored`;
 * - an id this device uploaded before → `duplicate`, or `updated` when the summary ended
 *   later than the row (the workflow was retried on the device and ended again);
 * - an id held by anything else (a cloud workflow, another device) → `IDEMPOTENCY_CONFLICT`.
 *
 * The batch goes in as one insert with the rows as one JSON array (prepared once, like the
 * SAF intake); only ids that did not go in are read back and classified.
 */
import { sql } from 'kysely';
import type { WorkflowSummary } from '../../saf/summary.js';
import { executeCached } from '../cachedQuery.js';
import { translateDriverError } from '../errors.js';
import type { Store } from '../store.js';

/** `metadata.source` of a row that came from a device's summary. */
export const EDGE_SUMMARY_SOURCE = 'edge';

/** What happened to one summary. */
export type SummaryOutcome =
  | { kind: 'stored' | 'updated' | 'duplicate' }
  | { kind: 'rejected'; code: 'IDEMPOTENCY_CONFLICT'; message: string };

const metadataOf = (deviceId: string, summary: WorkflowSummary, now: Date) => ({
  source: EDGE_SUMMARY_SOURCE,
  device_id: deviceId,
  synced_at: now.toISOString(),
  ...(summary.state_omitted ? { state_omitted: true } : {}),
});

/** Store `summaries` (distinct ids) of `deviceId`; the outcome of each by workflow id. */
export async function storeEdgeSummaries(
  store: Store,
  deviceId: string,
  summaries: readonly WorkflowSummary[],
  now: Date,
): Promise<Map<string, SummaryOutcome>> {
  const outcomes = new Map<string, SummaryOutcome>();
  if (summaries.length === 0) return outcomes;
  try {
    return await store.transaction(async (tx) => {
      const rows = tx.codec.json(
        summaries.map((s, ord) => ({
          ord,
          id: s.workflow_id,
          workflow_type: s.workflow_type,
          workflow_version: s.workflow_version ?? null,
          status: s.status,
          current_step_index: s.current_step_index,
          current_step: s.current_step,
          state: s.state,
          metadata: metadataOf(deviceId, s, now),
          created_at: s.created_at,
          updated_at: s.completed_at,
        })),
      );
      const { rows: inserted } = await executeCached(
        tx,
        'storeEdgeSummaries',
        [deviceId, rows],
        () => ({
          compile: () =>
            sql<{ id: string }>`
          INSERT INTO workflow_executions (id, workflow_type, workflow_version, status,
            current_step_index, current_step, state, owner_id, metadata, created_at, updated_at)
          SELECT r.id, r.workflow_type, r.workflow_version, r.status, r.current_step_index,
            r.current_step, r.state, ${deviceId}, r.metadata, r.created_at, r.updated_at
          FROM jsonb_to_recordset(${rows}::jsonb) AS r(ord int, id uuid, workflow_type text,
            workflow_version text, status text, current_step_index int, current_step text,
            state jsonb, metadata jsonb, created_at timestamptz, updated_at timestamptz)
          ORDER BY r.ord
          ON CONFLICT DO NOTHING
          RETURNING id`.compile(tx.db),
        }),
      );
      for (const row of inserted) outcomes.set(row.id, { kind: 'stored' });

      const leftovers = summaries.filter((s) => !outcomes.has(s.workflow_id));
      if (leftovers.length === 0) return outcomes;
      const held = await tx.db
        .selectFrom('workflow_executions')
        .select(['id', 'owner_id', 'metadata', 'updated_at'])
        .where(
          'id',
          'in',
          leftovers.map((s) => s.workflow_id),
        )
        .forUpdate()
        .execute();
      const byId = new Map(held.map((row) => [row.id, row]));
      for (const summary of leftovers) {
        const row = byId.get(summary.workflow_id);
        const metadata = row ? (tx.codec.parseJson(row.metadata) as Record<string, unknown>) : {};
        if (
          !row ||
          row.owner_id !== deviceId ||
          metadata.source !== EDGE_SUMMARY_SOURCE ||
          metadata.device_id !== deviceId
        ) {
          outcomes.set(summary.workflow_id, {
            kind: 'rejected',
            code: 'IDEMPOTENCY_CONFLICT',
            message: 'another workflow with this id is already stored',
          });
          continue;
        }
        if (new Date(summary.completed_at) <= tx.codec.parseTime(row.updated_at)) {
          outcomes.set(summary.workflow_id, { kind: 'duplicate' });
          continue;
        }
        await tx.db
          .updateTable('workflow_executions')
          .set({
            workflow_version: summary.workflow_version ?? null,
            status: summary.status,
            current_step_index: summary.current_step_index,
            current_step: summary.current_step,
            state: tx.codec.json(summary.state),
            metadata: tx.codec.json(metadataOf(deviceId, summary, now)),
            updated_at: tx.codec.time(new Date(summary.completed_at)),
            version: sql`version + 1`,
          })
          .where('id', '=', summary.workflow_id)
          .execute();
        outcomes.set(summary.workflow_id, { kind: 'updated' });
      }
      return outcomes;
    });
  } catch (error) {
    throw translateDriverError(
      error,
      `store ${summaries.length} workflow summar${summaries.length === 1 ? 'y' : 'ies'} of device ${deviceId}`,
    );
  }
}
