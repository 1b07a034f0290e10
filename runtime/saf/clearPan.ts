/**
 * Finding card numbers in clear. A card number is never stored in clear: a device must
 * send a card as token + last four digits + encrypted payload, and anything else in a
 * record that looks like a primary account number means the device leaked one, so the
 * record is refused before it is stored or logged anywhere.
 *
 * "Looks like a PAN" = 13 to 19 digits that pass the Luhn check, found anywhere in the
 * value — in strings, in object keys, in numbers, and across the strings of an array:
 *
 * - Digits are read whatever their script: full-width `４１１１`, Arabic-Indic, mathematical
 *   and the other forms NFKC or the Unicode digit tables map to `0`–`9` (`asciiDigits.ts`).
 * - One run of 13–19 digits.
 * - Printed groups: a group of four digits, then groups of three to six, each joined to the
 *   next by a separator of one to three characters that are neither letters nor digits
 *   (`4111 1111 1111 1111`, `4111.1111.1111.1111`, `4111/1111…`, `4111_1111…`, tabs, two
 *   spaces, `3782 - 822463 / 10005`). The group sizes keep dates, times and amounts out:
 *   `2025-03-01 10:00:02`, `1234.56` and most phone numbers (`+44 20 7946 0958`) break on
 *   a group of one, two or more than six digits; a letter, or a gap of four or more
 *   characters, always ends a number. The price: four-digit numbers listed with short
 *   separators (`2019, 2020, 2021, 2022`) read as a printed card, and one such list in ten
 *   passes Luhn — a record must not carry such lists as text.
 * - Across an array: adjacent strings of an array that hold no letters read as one text,
 *   each joined to the next by a space, so `["4111", "1111", "1111", "1111"]` and
 *   `["4111 1111", "1111 1111"]` are printed groups; the hit is the array's path. Numbers
 *   in an array are never joined (a list of amounts or counts is not a card), nor are
 *   strings with letters, and an element that is not a string ends the join.
 * - An integer too large for a double (> 2^53) with 16 to 19 digits cannot be checked
 *   exactly after `JSON.parse` and is treated as a card number.
 *
 * The price is false positives: one 13–19 digit number in ten passes Luhn by chance, so
 * records must not carry long numeric identifiers (epoch milliseconds have 13 digits —
 * send RFC 3339 times instead). A false positive rejects a record; a false negative leaks
 * a card number; the check leans toward the first. UUIDs are the exception made: every
 * record carries one (its `workflow_id`), and about one UUID in 2,500 has hex groups that
 * are all digits and line up like a printed card that passes Luhn
 * (`aace5705-3888-4162-9963-51b78820ecea`) — which refused valid records at random, and a
 * refused record is never synced. A UUID-shaped token is taken out before the scan. So is a
 * hex digest — a token of 32 or more hex digits standing on its own (MD5, SHA-1, SHA-256:
 * ETags, definition and binary hashes): about one SHA-256 hex string in a hundred holds a
 * run of 13+ decimal digits that passes Luhn, which refused command acks carrying an ETag.
 * A card number inside such a token is not a card printed anywhere.
 *
 * What is not caught: digits spelled out or interleaved with letters (`4111x1111…`), groups
 * joined by four or more separator characters, a run of more than 19 digits that embeds a
 * card number, and a number split across object members or across array elements that hold
 * letters. The check finds careless leaks, not a device that hides a number on purpose.
 */
import { hasDigits, toAsciiDigits } from './asciiDigits.js';

/** Where a clear card number was found: the JSON path of the value (or key) holding it. */
export interface ClearPanHit {
  path: string;
  /** True when the number was in an object key rather than a value. */
  inKey: boolean;
}

const MIN_DIGITS = 13;
const MAX_DIGITS = 19;

/** Whether a string of digits passes the Luhn (mod 10) check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const isPan = (digits: string) =>
  digits.length >= MIN_DIGITS && digits.length <= MAX_DIGITS && luhnValid(digits);

/** A UUID (8-4-4-4-12 hex digits), wherever it stands in a text. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** A hex digest: 32 or more hex digits, not part of a longer word. */
const HEX_DIGEST = /(?<![0-9a-z])[0-9a-f]{32,}(?![0-9a-z])/gi;

/** What a UUID or digest is replaced by before the scan: a letter, which ends any number. */
const TAKEN_OUT = 'x';

/** `text` with its UUIDs and hex digests taken out, as the scan reads it. */
const withoutIds = (text: string) => text.replace(UUID, TAKEN_OUT).replace(HEX_DIGEST, TAKEN_OUT);

/** The most characters between two printed groups of a card number. */
const MAX_SEPARATOR = 3;

/** A separator between printed groups: characters that are neither letters nor digits. */
const SEPARATOR = /^[^\p{L}\p{N}]+$/u;

/** Whether `text` holds at least {@link MIN_DIGITS} digits of any script: a card number's least. */
const hasPanDigits = (text: string) => hasDigits(text, MIN_DIGITS);

/** Whether the UTF-16 code unit `c` is an ASCII digit. */
const isDigitCode = (c: number) => c >= 48 && c <= 57;
/** Whether the UTF-16 code unit `c` is an ASCII letter. */
const isLetterCode = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * Whether ASCII-digit `text` has the shape any card number the scan finds must have, in one
 * pass over its character codes: a run of {@link MIN_DIGITS} digits or more, or a run of
 * four or more followed by one to {@link MAX_SEPARATOR} characters that are not ASCII
 * letters or digits and a run of three or more (the start of printed groups). The scan only
 * takes UUIDs and digests out, replacing each with a letter, so every run and separator it
 * reads stands as it is in `text`: a text without this shape holds no card number, and the
 * scan — the regular expressions and the runs it collects — is spared for nearly every
 * stored text (ids, RFC 3339 times, amounts, JSON documents of them). Any other non-letter
 * character, non-ASCII ones too, counts as a separator here, so the test only errs towards
 * scanning.
 */
export function mayHoldPan(text: string): boolean {
  let run = 0; // digits in the current run
  let before = 0; // digits in the run before the current gap, while it may start printed groups
  let gap = 0; // characters since that run ended
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    if (isDigitCode(c)) {
      if (++run >= MIN_DIGITS) return true;
      continue;
    }
    if (run > 0) {
      if (before >= 4 && gap >= 1 && gap <= MAX_SEPARATOR && run >= 3) return true;
      before = run;
      gap = 0;
      run = 0;
    }
    gap++;
    if (isLetterCode(c) || gap > MAX_SEPARATOR) before = 0;
  }
  return false;
}

/**
 * False only when neither `text` nor, if it is JSON, the value it parses to holds what the
 * detector calls a card number — `containsClearPan(text)` and `findClearPan(JSON.parse(text))`
 * both false — decided in two passes over the character codes, without parsing. It says so
 * only for the texts where the document cannot hold more than the text shows: plain ASCII
 * (no digit of another script), no backslash (every string and key stands in the text as it
 * is), no array but empty ones (the detector joins an array's strings) and no number in
 * exponent form (`1e15` is a 16-digit integer with no run of digits); for those, any card
 * number of a string, a key or a number has the shape {@link mayHoldPan} looks for in the
 * text itself.
 * UUIDs and digests are taken out first, as the scan takes them out: none can span a string's
 * quotes, so each string loses in the text what the scan of that string takes out. Every
 * other text answers true: the caller parses and scans. Nearly every document the stores
 * write (a state, an audit or log row) is such a text.
 */
export function jsonTextMayHoldPan(text: string): boolean {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f || c === 0x5c /* backslash */) return true;
    if (c === 0x22 /* " */) inString = !inString;
    else if (inString) continue;
    else if (c === 0x5b /* [ */ && text.charCodeAt(i + 1) !== 0x5d /* ] */) return true;
    else if ((c === 0x65 || c === 0x45) /* e E */ && startsNumber(text, i)) return true;
  }
  // ids and digests, taken out as the scan takes them out (no match spans a string's quotes)
  return mayHoldPan(text) && mayHoldPan(withoutIds(text));
}

/** Whether the `e` at `at` is a JSON number's exponent: digits and dots back to a token start. */
function startsNumber(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (isDigitCode(text.charCodeAt(i)) || text.charCodeAt(i) === 0x2e)) i--;
  if (i === at - 1) return false;
  if (i >= 0 && text.charCodeAt(i) === 0x2d /* - */) i--;
  return i < 0 || ':,[ \t\r\n'.includes(text[i]!);
}

/** Whether `text` contains something that looks like a clear card number. */
export function containsClearPan(text: string): boolean {
  // most texts (keys, codes, short values) cannot hold one: no scan for them
  if (!hasPanDigits(text)) return false;
  const ascii = toAsciiDigits(text);
  return mayHoldPan(ascii) && scanForPan(ascii);
}

/**
 * The scan of ASCII-digit `ascii` itself, UUIDs and digests taken out: a run of 13–19 digits
 * that passes Luhn, or printed groups that do. Exported for the test that {@link mayHoldPan}
 * never spares a text it would flag; callers use {@link containsClearPan}.
 */
export function scanForPan(ascii: string): boolean {
  const scanned = withoutIds(ascii);
  const runs: { digits: string; start: number; end: number }[] = [];
  for (const match of scanned.matchAll(/\d+/g)) {
    const digits = match[0];
    if (isPan(digits)) return true;
    runs.push({ digits, start: match.index, end: match.index + digits.length });
  }
  return runs.some((run, i) => run.digits.length === 4 && printedPanFrom(scanned, runs, i));
}

/** Whether printed groups starting at `runs[first]` make a card number (see the module comment). */
function printedPanFrom(
  text: string,
  runs: readonly { digits: string; start: number; end: number }[],
  first: number,
): boolean {
  let joined = runs[first]!.digits;
  for (let j = first + 1; j < runs.length; j++) {
    const next = runs[j]!;
    const gap = next.start - runs[j - 1]!.end;
    if (gap > MAX_SEPARATOR || !SEPARATOR.test(text.slice(next.start - gap, next.start)))
      return false;
    if (next.digits.length < 3 || next.digits.length > 6) return false;
    joined += next.digits;
    if (joined.length > MAX_DIGITS) return false;
    if (isPan(joined)) return true;
  }
  return false;
}

/** A letter of any script: a string holding one is never joined with its neighbours. */
const LETTER = /\p{L}/u;

/**
 * Whether adjacent letter-free strings of `items` read together hold a card number: each
 * stretch of two or more is joined with spaces and scanned as one text.
 */
function splitAcross(items: readonly unknown[]): boolean {
  let start = 0; // the first item of the current stretch
  for (let i = 0; i <= items.length; i++) {
    const item = items[i];
    if (i < items.length && typeof item === 'string' && !LETTER.test(item)) continue;
    if (i - start > 1 && containsClearPan(items.slice(start, i).join(' '))) return true;
    start = i + 1;
  }
  return false;
}

function numberLooksLikePan(value: number): boolean {
  if (!Number.isInteger(value)) return false;
  const magnitude = Math.abs(value);
  if (magnitude < 10 ** (MIN_DIGITS - 1)) return false;
  if (Number.isSafeInteger(magnitude)) return isPan(String(magnitude));
  // precision is lost beyond 2^53: a 16–19 digit integer cannot be checked, so it counts
  return magnitude < 10 ** MAX_DIGITS;
}

const child = (path: string, key: string | number) =>
  typeof key === 'number'
    ? `${path}[${key}]`
    : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`;

/**
 * The first place in a JSON value that holds a clear card number, or undefined. The path
 * never contains the number itself: a hit in a key reports the path of the object.
 */
export function findClearPan(value: unknown, path = '$'): ClearPanHit | undefined {
  // the keys and indexes down to the hit; the path is spelled out only for a hit
  const trail: (string | number)[] = [];
  const inKey = scan(value, trail);
  return inKey === undefined ? undefined : { path: trail.reduce<string>(child, path), inKey };
}

/** Whether `value` holds a card number (in a key: true, in a value: false), `trail` its place. */
function scan(value: unknown, trail: (string | number)[]): boolean | undefined {
  if (typeof value === 'string') return containsClearPan(value) ? false : undefined;
  if (typeof value === 'number') return numberLooksLikePan(value) ? false : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      trail.push(i);
      const hit = scan(value[i], trail);
      if (hit !== undefined) return hit;
      trail.pop();
    }
    // a number split across the strings: the hit is the array itself
    return splitAcross(value) ? false : undefined;
  }
  if (value !== null && typeof value === 'object') {
    // for…in, not Object.entries: this runs over every step's state, and entries allocates
    // a pair per member
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      if (containsClearPan(key)) return true;
      trail.push(key);
      const hit = scan(record[key], trail);
      if (hit !== undefined) return hit;
      trail.pop();
    }
  }
  return undefined;
}
