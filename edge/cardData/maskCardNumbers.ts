/**
 * Masking card numbers the way receipts print them: every digit but the last four replaced
 * with `*`. The terminal masks what it keeps or shows that is not a workflow's state — error
 * texts, audit and log rows, metric labels, its own log, local API answers — because those
 * must still say what happened (`card 4111…1111 declined` becomes `card ************1111
 * declined`), while a state holding a card number is refused outright (refuseCardState.ts).
 *
 * Whether a value holds a card number is the card detector's call (`containsClearPan`,
 * `findClearPan`); masking then works on clusters of digits — digits joined by up to three
 * characters that are neither letters nor digits, which covers every printed form (spaces,
 * dashes, dots, slashes, full-width digits). A cluster of 13 digits or more loses all but its
 * last four. If the detector still finds a card number after that (a number spread over the
 * strings of an array, a form the clusters do not join), the value loses every digit; if it
 * still does, it is replaced whole. So a masked value never holds what the detector calls a
 * card number, whatever form the number took.
 */
import { containsClearPan, findClearPan, jsonTextMayHoldPan } from '../../runtime/index.js';

/** Fewest digits a card number has. */
const MIN_PAN_DIGITS = 13;
/** Digits a masked card number keeps. */
const KEPT_DIGITS = 4;
/** The character a masked digit becomes. */
const MASK = '*';

const DIGIT = /\p{Nd}/u;
const DIGITS = /\p{Nd}/gu;
/** Digits joined by short runs of characters that are neither letters nor digits. */
const CLUSTER = /\p{Nd}(?:[^\p{L}\p{N}]{0,3}\p{Nd})*/gu;

/** What stands in for a value that could not be masked digit by digit. */
const REMOVED_CARD_DATA = '[card data removed]';

/** `cluster` with all but its last four digits masked when it has a card number's length. */
function maskCluster(cluster: string): string {
  const total = cluster.match(DIGITS)?.length ?? 0;
  if (total < MIN_PAN_DIGITS) return cluster;
  let seen = 0;
  let out = '';
  for (const char of cluster) {
    if (DIGIT.test(char)) out += ++seen > total - KEPT_DIGITS ? char : MASK;
    else out += char;
  }
  return out;
}

/** `text` with the card numbers the detector finds in it masked (see the module comment). */
export function maskCardNumbers(text: string): string {
  if (!containsClearPan(text)) return text;
  const masked = text.replace(CLUSTER, maskCluster);
  if (!containsClearPan(masked)) return masked;
  const bare = text.replace(DIGITS, MASK);
  return containsClearPan(bare) ? REMOVED_CARD_DATA : bare;
}

/** Every string (keys too) of `value` passed through `text`; numbers through `number`. */
function mapJson(
  value: unknown,
  text: (s: string) => string,
  number: (n: number) => unknown,
): unknown {
  if (typeof value === 'string') return text(value);
  if (typeof value === 'number') return number(value);
  if (Array.isArray(value)) return value.map((v) => mapJson(v, text, number));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value))
      out[text(key)] = mapJson(member, text, number);
    return out;
  }
  return value;
}

/** A number the detector calls a card number, masked as text; others as they are. */
const maskNumber = (n: number): unknown => (findClearPan(n) ? maskCardNumbers(String(n)) : n);

/** `value` with every digit of its strings masked, and every integer of four digits or more. */
const maskAllDigits = (value: unknown): unknown =>
  mapJson(
    value,
    (s) => s.replace(DIGITS, MASK),
    (n) => (Number.isInteger(n) && Math.abs(n) >= 1000 ? MASK : n),
  );

/** An empty value of `value`'s shape: what is left when nothing else hides the number. */
const emptied = (value: unknown): unknown =>
  Array.isArray(value) ? [] : value !== null && typeof value === 'object' ? {} : REMOVED_CARD_DATA;

/**
 * `value` with every card number the detector finds masked (see the module comment). A
 * value without one is returned as it is (the same object).
 */
export function maskCardData<T>(value: T): T {
  if (!findClearPan(value)) return value;
  const masked = mapJson(value, maskCardNumbers, maskNumber);
  if (!findClearPan(masked)) return masked as T;
  const bare = maskAllDigits(value);
  return (findClearPan(bare) ? emptied(value) : bare) as T;
}

/** Whether `text` holds at least a card number's count of digits (a cheap first test). */
function hasPanDigits(text: string): boolean {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // ASCII digits counted directly; any other digit (full-width, …) through its class
    const digit =
      code < 128
        ? code >= 48 && code <= 57
        : DIGIT.test(String.fromCodePoint(text.codePointAt(i)!));
    if (digit && ++digits >= MIN_PAN_DIGITS) return true;
  }
  return false;
}

/** `text` as JSON when it is an object or array document, else undefined. */
function parseDocument(text: string): object | undefined {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text) as object;
  } catch {
    return undefined;
  }
}

/** Longest texts {@link maskStoredText} remembers, and how many (see there). */
const REMEMBERED_MIN_CHARS = 512;
const REMEMBERED_TEXTS = 8;
/** Recent long texts that needed the full scan and held no card number. */
const remembered = new Set<string>();

/**
 * A stored text with its card numbers masked: a JSON document (a state, audit or log data
 * column) stays a JSON document of the same shape, masked member by member; any other text
 * is masked as text. A text without a card number is returned as it is.
 *
 * Masking is a function of the text alone, so the last few long texts that needed the full
 * scan and held no card number are remembered: the same text written again — the definition
 * snapshot every workflow row carries, a few kilobytes of JSON with arrays — is answered
 * without being parsed and walked again. A text that held one is not kept in memory.
 */
export function maskStoredText(text: string): string {
  if (!hasPanDigits(text)) return text;
  // the detector's shape test over the text, which for a plain JSON text answers for its
  // document too: most rows (a state, an audit or log row) are neither parsed nor walked
  if (!jsonTextMayHoldPan(text)) return text;
  if (text.length < REMEMBERED_MIN_CHARS) return scanAndMask(text);
  if (remembered.has(text)) return text;
  const masked = scanAndMask(text);
  if (masked !== text) return masked;
  if (remembered.size >= REMEMBERED_TEXTS) remembered.delete(remembered.values().next().value!);
  remembered.add(text);
  return text;
}

/** {@link maskStoredText} by parsing and scanning. */
function scanAndMask(text: string): string {
  const document = parseDocument(text);
  if (document === undefined) return maskCardNumbers(text);
  if (!containsClearPan(text) && !findClearPan(document)) return text;
  // the text is checked too: the detector may join digits of neighbouring members
  for (const candidate of [maskCardData(document), maskAllDigits(document)]) {
    const masked = JSON.stringify(candidate);
    if (!containsClearPan(masked)) return masked;
  }
  return JSON.stringify(emptied(document));
}
