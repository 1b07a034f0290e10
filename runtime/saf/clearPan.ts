/**
 * Finding card numbers in clear (DESIGN §5: a PAN is never stored in clear). A device must
 * send a card as token + last four digits + encrypted payload; anything else in a record
 * that looks like a primary account number means the device leaked one, and the record is
 * refused before it is stored or logged anywhere.
 *
 * "Looks like a PAN" = 13 to 19 digits that pass the Luhn check, found anywhere in the
 * value: in strings (as one run of digits, or in groups the way cards are printed —
 * `4111 1111 1111 1111`, `3782-822463-10005`: a first group of four, then groups of three
 * to six, separated by one space or dash), in object keys, and in numbers. An integer too
 * large for a double (> 2^53) with 16 to 19 digits cannot be checked exactly after
 * `JSON.parse` and is treated as a card number.
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
 */

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

/** Whether `text` holds at least {@link MIN_DIGITS} decimal digits, the least a card number has. */
function hasPanDigits(text: string): boolean {
  if (text.length < MIN_DIGITS) return false;
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57 && ++digits >= MIN_DIGITS) return true;
  }
  return false;
}

/** Whether `text` contains something that looks like a clear card number. */
export function containsClearPan(text: string): boolean {
  // most texts (keys, codes, short values) cannot hold one: no scan for them
  if (!hasPanDigits(text)) return false;
  const scanned = text.replace(UUID, '_').replace(HEX_DIGEST, '_');
  // runs of digits, each with the separator that follows it (one space or dash, or none)
  const runs: { digits: string; end: number }[] = [];
  for (const match of scanned.matchAll(/\d+/g)) {
    const digits = match[0];
    if (isPan(digits)) return true;
    runs.push({ digits, end: match.index + digits.length });
  }
  // grouped forms: a group of four, then groups of 3–6, each joined by one ' ' or '-'
  for (let i = 0; i < runs.length; i++) {
    const first = runs[i]!;
    if (first.digits.length !== 4) continue;
    let joined = first.digits;
    let previous = first;
    for (let j = i + 1; j < runs.length; j++) {
      const next = runs[j]!;
      const gap = scanned.slice(previous.end, previous.end + 1);
      const start = next.end - next.digits.length;
      if (start !== previous.end + 1 || (gap !== ' ' && gap !== '-')) break;
      if (next.digits.length < 3 || next.digits.length > 6) break;
      joined += next.digits;
      if (joined.length > MAX_DIGITS) break;
      if (isPan(joined)) return true;
      previous = next;
    }
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
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      if (containsClearPan(key)) return true;
      trail.push(key);
      const hit = scan(member, trail);
      if (hit !== undefined) return hit;
      trail.pop();
    }
  }
  return undefined;
}
