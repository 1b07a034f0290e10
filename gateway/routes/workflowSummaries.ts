/**
 * Summaries of workflows that ended on a device: `POST
 * /api/v1/devices/{device_id}/workflow-summaries`, the device itself only (any other caller
 * is a 403). Body `{summaries: [...]}`, 1 to 500 (schema: runtime/saf/summary.ts). Each
 * summary is checked on its own (uploadItems.ts: `CARD_DATA_IN_CLEAR`, `INVALID_SUMMARY`,
 * `SUMMARY_TOO_LARGE`, a repeated id with other content `IDEMPOTENCY_CONFLICT`), then the
 * batch is stored in one transaction (runtime/store/workflows/storeEdgeSummaries.ts): a
 * `workflow_executions` row per workflow, owned by the device, so `GET
 * /api/v1/workflows?owner_id=<device>` lists what a device ran. An id the cloud holds for
 * anything else is `IDEMPOTENCY_CONFLICT`.
 *
 * Response `{synced_ids, duplicates, rejected}` as for transaction records: `synced_ids`
 * lists every summary the cloud now holds (stored, updated, or held already), so a retried
 * upload is answered the same way; `duplicates` is the subset held already.
 */
import { z } from 'zod';
import {
  MAX_SUMMARY_BATCH,
  MAX_SUMMARY_BYTES,
  storeEdgeSummaries,
  workflowSummarySchema,
  type WorkflowSummary,
} from '../../runtime/index.js';
import { requireDeviceOrRole } from '../auth/principal.js';
import type { GatewayContext } from '../context.js';
import { deviceParams } from '../fields.js';
import { route } from '../route.js';
import {
  answerUpload,
  checkItem,
  firstOfEachId,
  uploadResponse,
  type CheckedItem,
  type ItemRules,
  type UploadRejection,
} from './uploadItems.js';

/** Largest upload: a full batch of the largest summaries, with room for the envelope. */
export const SUMMARY_BATCH_BODY_LIMIT = MAX_SUMMARY_BATCH * (MAX_SUMMARY_BYTES + 1024) + 64 * 1024;

const summaryRules: ItemRules<WorkflowSummary> = {
  schema: workflowSummarySchema,
  noun: 'summary',
  invalidCode: 'INVALID_SUMMARY',
  tooLargeCode: 'SUMMARY_TOO_LARGE',
  maxBytes: MAX_SUMMARY_BYTES,
  cardAdvice: 'take card data out of the state before uploading it',
};

const summariesBody = z.strictObject({
  summaries: z
    .array(z.unknown().meta({ description: 'a workflow summary (see docs/reference/http-api.md)' }))
    .min(1)
    .max(MAX_SUMMARY_BATCH),
});

/** Register the workflow-summary intake. */
export function registerWorkflowSummaryRoutes(ctx: GatewayContext): void {
  route(
    ctx,
    {
      method: 'POST',
      url: '/api/v1/devices/:device_id/workflow-summaries',
      summary: 'device: upload summaries of workflows that ended on it (up to 500)',
      tags: ['devices', 'workflows'],
      access: { roles: [], devices: true },
      params: deviceParams,
      body: summariesBody,
      response: uploadResponse,
      bodyLimit: SUMMARY_BATCH_BODY_LIMIT,
    },
    async ({ params, body, principal }) => {
      requireDeviceOrRole(principal, params.device_id, []);
      const rejected: UploadRejection[] = [];
      const checked: CheckedItem<WorkflowSummary>[] = [];
      for (const [index, raw] of body.summaries.entries()) {
        const one = checkItem(summaryRules, raw, index);
        if ('item' in one) checked.push(one);
        else rejected.push(one);
      }
      const accepted = firstOfEachId(checked, rejected);
      const outcomes = await storeEdgeSummaries(
        ctx.store,
        params.device_id,
        accepted.map((c) => c.item),
        ctx.now(),
      );
      return answerUpload(accepted, outcomes, rejected);
    },
  );
}
