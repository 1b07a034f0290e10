/**
 * What the inspector may see of a workflow. Inspection leaves the engine's trust boundary (it
 * goes to a browser tab, maybe on another machine), so the context, state and events it
 * carries are scrubbed the way a store-and-forward record is (edge/saf/finalState.ts): members
 * named like card data or credentials lose their value, strings and numbers that look like a
 * card number in clear (runtime/saf/clearPan.ts) become `[REDACTED]`, keys that do are dropped,
 * and a value the detector still flags after that (digits spread over an array's strings) is
 * replaced whole. An embedder's own masking (`InspectOptions.redact`, the edge agent's card
 * masking) runs after this one.
 */
import {
  containsClearPan,
  findClearPan,
  isCardDataKey,
  normalizeMemberName,
} from '../../runtime/index.js';

/** What replaces a value the inspector must not see. */
const REDACTED = '[REDACTED]';

/** Member names (normalized) whose values are credentials; card data names come from runtime. */
const CREDENTIAL_KEYS = new Set([
  'secret',
  'secrets',
  'password',
  'passwd',
  'token',
  'accesstoken',
  'refreshtoken',
  'apikey',
  'authorization',
  'privatekey',
  'clientsecret',
  'devicesecret',
  'cardkey',
]);

/** Whether a member called `key` holds card data or a credential by its name. */
const isSensitiveInspectionKey = (key: string): boolean =>
  isCardDataKey(key) || CREDENTIAL_KEYS.has(normalizeMemberName(key));

function walk(value: unknown): unknown {
  if (typeof value === 'string') return containsClearPan(value) ? REDACTED : value;
  if (typeof value === 'number' || typeof value === 'bigint')
    return containsClearPan(String(value)) ? REDACTED : value;
  if (Array.isArray(value)) {
    const items = value.map(walk);
    // digits spread over the strings of an array read as one printed number
    return findClearPan(items) ? REDACTED : items;
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (containsClearPan(key)) continue;
      out[key] = isSensitiveInspectionKey(key) ? REDACTED : walk(inner);
    }
    return out;
  }
  return value;
}

/** `value` as the inspector may see it (see the module comment); the input is not changed. */
export function redactForInspection<T>(value: T): T {
  const out = walk(value);
  // a form the member-by-member pass did not catch: nothing of it is sent
  return (findClearPan(out) ? REDACTED : out) as T;
}
