/**
 * One upload: send a batch (queued transaction records, or workflow summaries) and read the
 * cloud's answer into outcomes by workflow id (gateway/routes/uploadItems.ts:
 * `{synced_ids, duplicates, rejected: [{id, index, code, message}], sequence_gaps?}`). Only
 * ids that were sent are believed: an item is marked synced because the cloud named it,
 * never because it was sent. Anything short of a batch answer throws a
 * {@link SafSyncError} saying why.
 */
import { z } from 'zod';
import { SafSyncError } from './errors.js';

const responseSchema = z.looseObject({
  synced_ids: z.array(z.string()),
  duplicates: z.array(z.string()).optional(),
  rejected: z.array(
    z.looseObject({
      id: z.string().nullable().optional(),
      index: z.number().int().optional(),
      code: z.string(),
    }),
  ),
  sequence_gaps: z
    .array(z.looseObject({ from: z.number().int(), to: z.number().int() }))
    .optional(),
});

/** The cloud's answer to one batch, restricted to what was sent. */
export interface BatchAnswer {
  synced: string[];
  duplicates: string[];
  rejected: { workflowId: string; code: string }[];
  sequenceGaps: { from: number; to: number }[];
}

const retryAfterMs = (header: string | null): number | undefined => {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
};

/**
 * Send a batch with `send` — the items whose workflow ids are `ids`, in that order — and
 * read the answer; throws a {@link SafSyncError}.
 */
export async function uploadBatch(
  send: () => Promise<Response>,
  ids: readonly string[],
): Promise<BatchAnswer> {
  let response: Response;
  let text: string;
  try {
    response = await send();
    text = await response.text();
  } catch (cause) {
    throw new SafSyncError('SAF_UPLOAD_FAILED', 'the cloud could not be reached', {
      cause,
      retryable: true,
    });
  }
  if (!response.ok) {
    let cloudCode: string | undefined;
    try {
      const problem = JSON.parse(text) as { code?: unknown };
      if (typeof problem.code === 'string') cloudCode = problem.code;
    } catch {
      // not problem+json: the status says enough
    }
    const retryable = response.status >= 500 || response.status === 429;
    const wait = retryAfterMs(response.headers.get('retry-after'));
    throw new SafSyncError(
      'SAF_UPLOAD_REFUSED',
      `the cloud answered the batch with ${response.status}${cloudCode ? ` ${cloudCode}` : ''}`,
      {
        retryable,
        details: { status: response.status, ...(cloudCode ? { cloudCode } : {}) },
        ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      },
    );
  }
  let parsed: z.output<typeof responseSchema>;
  try {
    parsed = responseSchema.parse(JSON.parse(text));
  } catch (cause) {
    throw new SafSyncError(
      'SAF_UPLOAD_BAD_RESPONSE',
      'the cloud’s answer is not a batch response',
      {
        cause,
        retryable: true,
      },
    );
  }
  const sent = new Set(ids);
  const synced = parsed.synced_ids.filter((id) => sent.has(id));
  const syncedSet = new Set(synced);
  const rejected: BatchAnswer['rejected'] = [];
  for (const r of parsed.rejected) {
    // the index is authoritative (the id is withheld when it may hold card data)
    const byIndex = r.index !== undefined ? ids[r.index] : undefined;
    const workflowId = byIndex ?? (r.id && sent.has(r.id) ? r.id : undefined);
    if (workflowId === undefined || syncedSet.has(workflowId)) continue;
    if (r.id && byIndex !== undefined && r.id !== byIndex) continue; // inconsistent: keep it pending
    rejected.push({ workflowId, code: r.code });
  }
  return {
    synced,
    duplicates: (parsed.duplicates ?? []).filter((id) => syncedSet.has(id)),
    rejected,
    sequenceGaps: (parsed.sequence_gaps ?? []).map(({ from, to }) => ({ from, to })),
  };
}
