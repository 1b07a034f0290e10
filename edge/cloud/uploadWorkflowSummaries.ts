/**
 * The workflow-summary upload call: `POST /api/v1/devices/{device_id}/workflow-summaries`
 * with `{summaries}` (gateway/routes/workflowSummaries.ts). A function over
 * {@link CloudClient.request}, like the transaction upload, so the connectivity tracker and
 * tests that cut the network see it as every other call.
 */
import type { WorkflowSummary } from '../../runtime/index.js';
import type { CloudClient } from './cloudClient.js';

/** The path of the summary intake for `deviceId`. */
export const workflowSummariesPath = (deviceId: string) =>
  `/api/v1/devices/${encodeURIComponent(deviceId)}/workflow-summaries`;

/** Upload `summaries`; resolves with the response as `request` does. */
export function uploadWorkflowSummaries(
  client: CloudClient,
  summaries: readonly WorkflowSummary[],
  options: { signal?: AbortSignal } = {},
): Promise<Response> {
  return client.request({
    method: 'POST',
    path: workflowSummariesPath(client.deviceId),
    json: { summaries },
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
