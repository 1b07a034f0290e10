/**
 * Building the signed store-and-forward record of a settled workflow (docs/architecture.md#security, #cloud-and-edge), with the
 * shared record schema (runtime/saf/record.ts) — the same one the cloud checks on upload —
 * so a record the device commits is one the cloud will accept. Pure: the sequence number
 * and the completion time come from the caller, who takes them inside the transaction.
 *
 * What comes from the workflow state (the conventions of examples/payments):
 *
 * | state member    | record member            | rule                                                   |
 * |-----------------|--------------------------|--------------------------------------------------------|
 * | `amount_minor`  | `amount_minor`           | a safe integer, and only with a valid `currency`       |
 * | `currency`      | `currency`               | an ISO 4217 code (`[A-Z]{3}`)                          |
 * | `card`          | `card`                   | `{token, last4}` + the whole object encrypted          |
 * | everything else | `final_state`            | sanitized (finalState.ts)                              |
 *
 * A `card` that is present must be tokenized (`token` that does not look like a card
 * number, four-digit `last4`); otherwise the record — and with it the workflow's terminal
 * commit — is refused with SAF_CARD_INVALID rather than written with a card that cannot be
 * settled or with a number in clear.
 */
import {
  canonicalJson,
  containsClearPan,
  findClearPan,
  MAX_SAF_RECORD_BYTES,
  safRecordSchema,
  signSigningText,
  type JsonObject,
  type SafRecord,
} from '../../runtime/index.js';
import { encryptCardPayload } from './cardPayload.js';
import { SafError } from './errors.js';
import { sanitizeFinalState } from './finalState.js';

/** Longest base64 payload the record schema takes. */
const MAX_PAYLOAD_CHARS = 8192;

/** The workflow a record is built for. */
export interface SafRecordSource {
  workflowId: string;
  workflowType: string;
  workflowVersion: string | null;
  /** When the workflow started on the device. */
  createdAt: Date;
  /** The final state, as the terminal commit writes it. */
  state: JsonObject;
}

/** Who signs and encrypts, and the facts taken in the transaction. */
export interface SafRecordContext {
  deviceId: string;
  deviceSecret: string;
  cardKey: Buffer;
  sequence: number;
  completedAt: Date;
}

/** A built record and the paths sanitizing took out of its final state. */
export interface BuiltSafRecord {
  record: SafRecord;
  removed: string[];
}

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function cardOf(state: JsonObject, workflowId: string, key: Buffer): SafRecord['card'] {
  const card = state.card;
  if (card === undefined || card === null) return undefined;
  if (!isObject(card))
    throw new SafError('SAF_CARD_INVALID', 'state.card must be an object (token, last4, …)');
  const { token, last4 } = card;
  if (typeof token !== 'string' || token.length < 1 || token.length > 200)
    throw new SafError(
      'SAF_CARD_INVALID',
      'state.card.token must be a string of 1 to 200 characters: the workflow must tokenize the card',
    );
  if (containsClearPan(token))
    throw new SafError(
      'SAF_CARD_INVALID',
      'state.card.token looks like a card number in clear: the workflow must tokenize the card',
    );
  if (typeof last4 !== 'string' || !/^\d{4}$/.test(last4))
    throw new SafError('SAF_CARD_INVALID', 'state.card.last4 must be four digits');
  const encrypted = encryptCardPayload(key, card, workflowId);
  if (encrypted.length > MAX_PAYLOAD_CHARS)
    throw new SafError(
      'SAF_CARD_INVALID',
      `state.card is too large to encrypt into a record (${encrypted.length} base64 characters, at most ${MAX_PAYLOAD_CHARS})`,
    );
  return { token, last4, encrypted_payload: encrypted };
}

const pathOf = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    '$',
  );

/** The signed record of `source` (see the module comment); throws a {@link SafError}. */
export function buildSafRecord(source: SafRecordSource, ctx: SafRecordContext): BuiltSafRecord {
  const { state } = source;
  const card = cardOf(state, source.workflowId, ctx.cardKey);
  const currency =
    typeof state.currency === 'string' && /^[A-Z]{3}$/.test(state.currency)
      ? state.currency
      : undefined;
  const amount =
    currency !== undefined && Number.isSafeInteger(state.amount_minor)
      ? (state.amount_minor as number)
      : undefined;
  const sanitized = sanitizeFinalState(state, [ctx.deviceSecret]);
  const unsigned: Record<string, unknown> = {
    workflow_id: source.workflowId,
    device_id: ctx.deviceId,
    workflow_type: source.workflowType,
    ...(source.workflowVersion !== null ? { workflow_version: source.workflowVersion } : {}),
    device_sequence: ctx.sequence,
    ...(amount !== undefined ? { amount_minor: amount } : {}),
    ...(currency !== undefined ? { currency } : {}),
    ...(card ? { card } : {}),
    final_state: sanitized.state,
    created_at: source.createdAt.toISOString(),
    completed_at: ctx.completedAt.toISOString(),
  };
  // `unsigned` has no signature member: its canonical JSON is the signing text
  const text = canonicalJson(unsigned);
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_SAF_RECORD_BYTES)
    throw new SafError(
      'SAF_RECORD_TOO_LARGE',
      `the record of workflow ${source.workflowId} is ${bytes} bytes of canonical JSON; the cloud takes at most ${MAX_SAF_RECORD_BYTES}`,
      { details: { bytes, limit: MAX_SAF_RECORD_BYTES } },
    );
  const signed = { ...unsigned, signature: signSigningText(ctx.deviceSecret, text) };
  const parsed = safRecordSchema.safeParse(signed);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: pathOf(i.path), message: i.message }));
    throw new SafError(
      'SAF_RECORD_INVALID',
      `the record of workflow ${source.workflowId} is invalid: ${issues
        .slice(0, 5)
        .map((i) => `${i.path}: ${i.message}`)
        .join('; ')}`,
      { details: { issues } },
    );
  }
  // the cloud refuses any record with a card number in clear anywhere (its ids, its type)
  const pan = findClearPan(signed);
  if (pan)
    throw new SafError(
      'SAF_RECORD_INVALID',
      `the record of workflow ${source.workflowId} has what looks like a card number in clear ${pan.inKey ? 'in a key of' : 'at'} ${pan.path}`,
      { details: { issues: [{ path: pan.path, message: 'looks like a card number in clear' }] } },
    );
  // the exact object that was signed (parsing may copy, never change meaning — but be exact)
  return { record: signed as SafRecord, removed: sanitized.removed };
}
