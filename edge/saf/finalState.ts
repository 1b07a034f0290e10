/**
 * The `final_state` of a store-and-forward record: the workflow's state with everything a
 * record must not carry taken out (docs/architecture.md#security, #cloud-and-edge: no card data, no secrets).
 *
 * - `card` (top level) is removed: the record carries it as token + last four + encrypted
 *   payload (see buildSafRecord.ts), never inside the state.
 * - Members named like sensitive card data (`pan`, `card_number`, `cvv`, `pin_block`,
 *   `track2`, … — compared without case, `_` or `-`) are removed at any depth.
 * - Values that look like a card number in clear (runtime/saf/clearPan.ts) become
 *   `"[REDACTED]"`; an object key that does is removed with its value.
 * - Occurrences of the given secret strings (the device secret) become `"[REDACTED]"`.
 *
 * Stripping rather than refusing is deliberate here: the clear-PAN check has false positives
 * (one 13–19 digit number in ten passes Luhn — an epoch-milliseconds field, an order
 * number), and refusing would fail approved payments at random. The cloud runs the same
 * check on what it receives, so a record that passed this one is never refused for it.
 */
import {
  containsClearPan,
  findClearPan,
  isCardDataKey,
  type JsonObject,
} from '../../runtime/index.js';

/** What replaces a value that looked like card data or held a secret. */
export const REDACTED = '[REDACTED]';

const child = (path: string, key: string | number) =>
  typeof key === 'number'
    ? `${path}[${key}]`
    : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`;

/** The sanitized state and where something was taken out (paths never hold the data). */
export interface SanitizedState {
  state: JsonObject;
  removed: string[];
}

/** `state` as a record may carry it (see the module comment). */
export function sanitizeFinalState(
  state: JsonObject,
  secrets: readonly string[] = [],
): SanitizedState {
  const removed: string[] = [];
  const forms = secrets.filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  const scrubSecrets = (text: string) => {
    let out = text;
    for (const secret of forms) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  // the keys and indexes down to the value walked; a path is spelled out only when reported
  const trail: (string | number)[] = [];
  const here = () => trail.reduce<string>(child, '$');

  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const scrubbed = scrubSecrets(value);
      if (scrubbed !== value || findClearPan(scrubbed)) {
        removed.push(here());
        return findClearPan(scrubbed) ? REDACTED : scrubbed;
      }
      return value;
    }
    if (typeof value === 'number') {
      if (findClearPan(value)) {
        removed.push(here());
        return REDACTED;
      }
      return value;
    }
    if (Array.isArray(value))
      return value.map((item, i) => {
        trail.push(i);
        const out = walk(item);
        trail.pop();
        return out;
      });
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, member] of Object.entries(value)) {
        if (containsClearPan(key) || scrubSecrets(key) !== key) {
          // the key itself is the leak: report where, never the key
          removed.push(`${here()} (a key)`);
          continue;
        }
        trail.push(key);
        if (isCardDataKey(key)) removed.push(here());
        else if (key === '__proto__')
          Object.defineProperty(out, key, {
            value: walk(member),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else out[key] = walk(member);
        trail.pop();
      }
      return out;
    }
    return value;
  };

  // a JSON round trip drops what JSON cannot carry (undefined members, functions)
  const { card: _card, ...rest } = JSON.parse(JSON.stringify(state)) as JsonObject;
  return { state: walk(rest) as JsonObject, removed };
}
