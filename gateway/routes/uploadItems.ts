/**
 * What the device uploads (transaction records, workflow summaries) share: a batch of JSON
 * items keyed by `workflow_id`, each checked on its own — a bad item is rejected with its
 * index and a stable code and never blocks the good ones — and one answer shape,
 * `{synced_ids, duplicates, rejected: [{id, index, code, message, errors?}]}`.
 *
 * The common first checks, in order: something that looks like a card number in clear
 * (`CARD_DATA_IN_CLEAR`: the item is neither stored nor logged, the message names only
 * where), the item's schema (`invalidCode`, with `errors` by path), and the size of its
 * canonical JSON (`tooLargeCode`).
 */
import { z } from 'zod';
import { canonicalJson, findClearPan } from '../../runtime/index.js';

/** A rejected item of an upload. */
export const uploadRejection = z.object({
  id: z.string().nullable(),
  index: z.number().int(),
  code: z.string(),
  message: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
/** A rejected item of an upload. */
export type UploadRejection = z.output<typeof uploadRejection>;

/** The answer to an upload. */
export const uploadResponse = z.object({
  synced_ids: z.array(z.string()),
  duplicates: z.array(z.string()),
  rejected: z.array(uploadRejection),
});

/** How one kind of item is checked. */
export interface ItemRules<T> {
  schema: z.ZodType<T>;
  /** What an item is called in messages ("record", "summary"). */
  noun: string;
  invalidCode: string;
  tooLargeCode: string;
  /** Largest canonical JSON of the item, in UTF-8 bytes. */
  maxBytes: number;
  /** What the card-data message tells the device to do instead. */
  cardAdvice: string;
  /** The part of the item its size and content are measured on (default: all of it). */
  measured?: (raw: Record<string, unknown>) => unknown;
}

/** An item that passed the common checks. */
export interface CheckedItem<T> {
  index: number;
  item: T;
  /** The item as uploaded. */
  raw: Record<string, unknown>;
  /** Canonical JSON of the measured part. */
  content: string;
}

const pathOf = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    '$',
  );

/** The item's `workflow_id` when it is a plausible string, else null. */
export const uploadedIdOf = (raw: unknown): string | null => {
  const id = (raw as { workflow_id?: unknown } | null)?.workflow_id;
  return typeof id === 'string' && id.length <= 200 ? id : null;
};

/** A rejection of item `index`. */
export const rejectItem = (
  raw: unknown,
  index: number,
  code: string,
  message: string,
  extra: Partial<UploadRejection> = {},
): UploadRejection => ({ id: uploadedIdOf(raw), index, code, message, ...extra });

/** The common checks of one item (see the module comment). */
export function checkItem<T>(
  rules: ItemRules<T>,
  raw: unknown,
  index: number,
): UploadRejection | CheckedItem<T> {
  const pan = findClearPan(raw);
  if (pan)
    return {
      // not even the id: it could be where the number is
      id: pan.path === '$.workflow_id' ? null : uploadedIdOf(raw),
      index,
      code: 'CARD_DATA_IN_CLEAR',
      message: `the ${rules.noun} contains what looks like a card number in clear (${pan.inKey ? 'in a key of' : 'at'} ${pan.path}); ${rules.cardAdvice}`,
    };
  const parsed = rules.schema.safeParse(raw);
  if (!parsed.success) {
    const errors = parsed.error.issues
      .slice(0, 20)
      .map((issue) => ({ path: pathOf(issue.path), message: issue.message }));
    return rejectItem(
      raw,
      index,
      rules.invalidCode,
      errors.map((e) => `${e.path}: ${e.message}`).join('; '),
      { errors },
    );
  }
  const object = raw as Record<string, unknown>; // the schemas admit objects only
  const content = canonicalJson(rules.measured ? rules.measured(object) : object);
  if (Buffer.byteLength(content) > rules.maxBytes)
    return rejectItem(
      raw,
      index,
      rules.tooLargeCode,
      `a ${rules.noun} is at most ${rules.maxBytes} bytes of canonical JSON`,
    );
  return { index, item: parsed.data, raw: object, content };
}

/**
 * Settle repeats within one upload: the first of an id is kept, an exact repeat counts once,
 * a repeat with other content is `IDEMPOTENCY_CONFLICT`. Returns the items to store.
 */
export function firstOfEachId<T extends { workflow_id: string }>(
  items: readonly CheckedItem<T>[],
  rejected: UploadRejection[],
): CheckedItem<T>[] {
  const byId = new Map<string, CheckedItem<T>>();
  const kept: CheckedItem<T>[] = [];
  for (const checked of items) {
    const id = checked.item.workflow_id;
    const same = byId.get(id);
    if (!same) {
      byId.set(id, checked);
      kept.push(checked);
    } else if (same.content !== checked.content)
      rejected.push({
        id,
        index: checked.index,
        code: 'IDEMPOTENCY_CONFLICT',
        message: `workflow_id appears earlier in this batch (index ${same.index}) with other content`,
      });
  }
  return kept;
}

/** What the store did with one item. */
export type StoredOutcome =
  | { kind: 'stored' | 'updated' | 'duplicate' }
  | { kind: 'rejected'; code: string; message: string };

/**
 * The answer to an upload from the store's outcome per id: rejections join `rejected`
 * (sorted by index), everything the cloud holds is synced, what it held already a duplicate.
 */
export function answerUpload<T extends { workflow_id: string }>(
  accepted: readonly CheckedItem<T>[],
  outcomes: ReadonlyMap<string, StoredOutcome>,
  rejected: UploadRejection[],
): z.output<typeof uploadResponse> {
  const synced: string[] = [];
  const duplicates: string[] = [];
  for (const { item, index } of accepted) {
    const outcome = outcomes.get(item.workflow_id);
    if (!outcome) continue;
    if (outcome.kind === 'rejected')
      rejected.push({ id: item.workflow_id, index, code: outcome.code, message: outcome.message });
    else {
      synced.push(item.workflow_id);
      if (outcome.kind === 'duplicate') duplicates.push(item.workflow_id);
    }
  }
  rejected.sort((a, b) => a.index - b.index);
  return { synced_ids: synced, duplicates, rejected };
}
