/**
 * The store-and-forward upload call: `POST /api/v1/transactions/batch` with `{records}`
 * (gateway/routes/transactions.ts). A function over {@link CloudClient.request} rather than
 * a member of the client, so anything that wraps the client's `request` — the agent's
 * connectivity tracker, a test that cuts the network — sees uploads like every other call.
 */
import type { CloudClient } from './cloudClient.js';

/** The path of the SAF intake. */
export const TRANSACTIONS_BATCH_PATH = '/api/v1/transactions/batch';

/** Upload `records` (signed SAF records); resolves with the response as `request` does. */
export function uploadTransactions(
  client: CloudClient,
  records: readonly unknown[],
  options: { signal?: AbortSignal } = {},
): Promise<Response> {
  return client.request({
    method: 'POST',
    path: TRANSACTIONS_BATCH_PATH,
    json: { records },
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
