/**
 * The workflow summary: what an edge device uploads about each workflow that ended on it
 * (COMPLETED, FAILED, FAILED_ROLLED_BACK or CANCELLED), online or offline, so operators see
 * in the cloud what the fleet did. The cloud keeps it as a `workflow_executions` row owned
 * by the device (gateway/routes/workflowSummaries.ts); it is a record of what happened, not
 * a workflow the cloud runs.
 *
 * | field              | type                          | note                                         |
 * |--------------------|-------------------------------|----------------------------------------------|
 * | workflow_id        | UUID                          | the workflow's id on the device              |
 * | workflow_type      | string (1–200)                |                                              |
 * | workflow_version   | string (1–50), optional       |                                              |
 * | status             | a terminal workflow status    |                                              |
 * | current_step_index | integer ≥ 0                   | where it ended                               |
 * | current_step       | string (1–200) or null        |                                              |
 * | state              | JSON object                   | final state without card data or secrets     |
 * | state_omitted      | `true`, optional              | the state was too large and is not included  |
 * | created_at         | RFC 3339 time                 | start on the device                          |
 * | completed_at       | RFC 3339 time                 | end on the device                            |
 *
 * Summaries are not signed one by one (unlike transaction records, which are evidence kept
 * for settlement): the upload itself is a signed device request (docs/architecture.md#security). A summary's
 * canonical JSON may not exceed {@link MAX_SUMMARY_BYTES}; the device leaves a larger state
 * out and says so with `state_omitted`.
 */
import { z } from 'zod';
import { TERMINAL_WORKFLOW_STATUSES } from '../model/statuses.js';

/** Most summaries in one upload. */
export const MAX_SUMMARY_BATCH = 500;
/** Largest summary (canonical JSON, UTF-8 bytes). */
export const MAX_SUMMARY_BYTES = 16 * 1024;

const time = z.iso.datetime({ offset: true });

/** A workflow summary as uploaded. */
export const workflowSummarySchema = z.strictObject({
  workflow_id: z.uuid(),
  workflow_type: z.string().min(1).max(200),
  workflow_version: z.string().min(1).max(50).optional(),
  status: z.enum(TERMINAL_WORKFLOW_STATUSES),
  current_step_index: z.number().int().min(0).max(1_000_000),
  current_step: z.string().min(1).max(200).nullable(),
  state: z.record(z.string(), z.unknown()),
  state_omitted: z.literal(true).optional(),
  created_at: time,
  completed_at: time,
});

/** A workflow summary. */
export type WorkflowSummary = z.output<typeof workflowSummarySchema>;
