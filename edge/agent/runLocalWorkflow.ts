/**
 * One workflow for the POS: start it and drive it until it is no longer ACTIVE (docs/architecture.md#statuses),
 * so the cashier gets the customer's outcome in the same request.
 *
 * Before a new workflow starts:
 *
 * - its data may not carry a card number in clear (the state is persisted; a PAN never is)
 *   nor the reserved member `edge`, which the agent fills with what the workflow may need to
 *   know about the device: `{online, device_id}` — the floor-limit route reads
 *   `state.edge.online`;
 * - while offline, the store-and-forward limits of the signed configuration are checked: an
 *   offline payment over the unsent amount, record count or age limit is not started at all
 *   and answered as declined (`SAF_AMOUNT_LIMIT`, `SAF_COUNT_LIMIT`, `SAF_AGE_LIMIT`). The
 *   amount is `data.amount_minor` when it is an integer.
 *
 * An `idempotencyKey` makes a retry safe: a POS that lost the answer (the agent restarted
 * mid-payment) sends the same request again and gets the one workflow that key started —
 * driven on if it was interrupted — never a second payment.
 */
import type { Runtime } from '../../actors/index.js';
import {
  containsClearPan,
  findClearPan,
  getWorkflowByIdempotencyKey,
  isTerminalWorkflowStatus,
  type JsonObject,
  type EdgeStore,
  type WorkflowRecord,
} from '../../runtime/index.js';
import type { SafLimitCode, SafLimitRequest } from '../saf/safLimits.js';
import { AgentError } from './errors.js';

/** Data members the agent reserves for itself. */
export const RESERVED_DATA_KEYS = ['edge'] as const;

/** A workflow the POS asks for. */
export interface LocalRunRequest {
  workflowType: string;
  data: JsonObject;
  idempotencyKey?: string;
}

/** What became of it. */
export type LocalRunOutcome =
  | { kind: 'ran'; record: WorkflowRecord; created: boolean }
  | { kind: 'declined'; code: SafLimitCode; message: string };

/** What running needs from the agent. */
export interface LocalRunDeps {
  store: EdgeStore;
  runtime: Runtime;
  deviceId: string;
  isOnline(): boolean;
  hasType(workflowType: string): boolean;
  /** The store-and-forward verdict on one more offline payment. */
  checkOfflineLimits(
    request: SafLimitRequest,
  ): Promise<{ ok: true } | { ok: false; code: SafLimitCode; message: string }>;
  /** Told when a workflow ended (a record may be waiting for upload). */
  onSettled?(record: WorkflowRecord): void;
}

/**
 * Drive `record` until it is no longer ACTIVE. A workflow that the start-up recovery (or
 * another request with the same key) drives at the same moment may end under our feet: the
 * engine then answers with the workflow as that other drive left it (runUntilSettled).
 */
const drive = async (deps: LocalRunDeps, record: WorkflowRecord) => {
  // the record as the engine just returned it is not read again
  const settled = await deps.runtime.runUntilSettled(record.id, record);
  if (isTerminalWorkflowStatus(settled.status)) deps.onSettled?.(settled);
  return settled;
};

/** Refuse reserved members and card numbers in clear in POS-supplied `data`. */
function checkData(data: JsonObject, name: 'data' | 'input'): void {
  for (const key of RESERVED_DATA_KEYS)
    if (Object.hasOwn(data, key))
      throw new AgentError(
        'RESERVED_DATA_KEY',
        `${name}.${key} is reserved: the agent sets it (${key}.online, ${key}.device_id)`,
      );
  const pan = findClearPan(data);
  if (pan)
    throw new AgentError(
      'CARD_DATA_IN_CLEAR',
      `the ${name} contains what looks like a card number in clear (${pan.inKey ? 'in a key of' : 'at'} ${pan.path.replace(/^\$/, name)}); send the card as a token and its last four digits`,
    );
}

/**
 * Give human input to a WAITING_HUMAN_INPUT workflow and drive it on. `edge` is refreshed
 * with the connectivity of now: a payment started online may be finished offline.
 */
export async function resumeLocalWorkflow(
  deps: LocalRunDeps,
  id: string,
  input: JsonObject,
): Promise<WorkflowRecord> {
  checkData(input, 'input');
  const resumed = await deps.runtime.resume(id, {
    ...input,
    edge: { online: deps.isOnline(), device_id: deps.deviceId },
  });
  return drive(deps, resumed);
}

/** Run `request` (see the module comment). */
export async function runLocalWorkflow(
  deps: LocalRunDeps,
  request: LocalRunRequest,
): Promise<LocalRunOutcome> {
  const { workflowType, data, idempotencyKey } = request;
  // the key is stored and looked up as given: it cannot be masked, so it may not hold a card
  if (idempotencyKey !== undefined && containsClearPan(idempotencyKey))
    throw new AgentError(
      'CARD_DATA_IN_CLEAR',
      'the idempotency_key looks like a card number in clear; use an id of the POS',
    );
  if (idempotencyKey !== undefined) {
    const existing = await getWorkflowByIdempotencyKey(deps.store, idempotencyKey);
    if (existing) {
      if (existing.workflowType !== workflowType)
        throw new AgentError(
          'IDEMPOTENCY_CONFLICT',
          `idempotency_key was used for a ${existing.workflowType} workflow`,
        );
      return { kind: 'ran', record: await drive(deps, existing), created: false };
    }
  }
  checkData(data, 'data');
  if (!deps.hasType(workflowType))
    throw new AgentError(
      'WORKFLOW_TYPE_UNKNOWN',
      `no workflow type ${JSON.stringify(workflowType)} is loaded`,
    );
  const online = deps.isOnline();
  if (!online) {
    const amount = data.amount_minor;
    const currency = data.currency;
    const verdict = await deps.checkOfflineLimits({
      amountMinor: Number.isSafeInteger(amount) ? (amount as number) : null,
      currency: typeof currency === 'string' ? currency : null,
    });
    if (!verdict.ok) return { kind: 'declined', code: verdict.code, message: verdict.message };
  }
  const started = await deps.runtime.start(
    workflowType,
    { ...data, edge: { online, device_id: deps.deviceId } },
    idempotencyKey !== undefined ? { idempotencyKey } : {},
  );
  return { kind: 'ran', record: await drive(deps, started), created: true };
}
