/**
 * Digits as the card detector reads them. A card number written in full-width digits
 * (`４１１１…`, what a Japanese or Chinese input method types), mathematical or circled
 * digits, or the digits of another script (Arabic-Indic `٤١١١…`, Devanagari) is the same
 * number to anyone who reads it, so the detector reads every one of them as the ASCII digit
 * it stands for: the text is NFKC-normalised (full-width, mathematical, superscript and
 * circled forms become ASCII, a no-break or ideographic space becomes a space) and each
 * remaining decimal digit of another script is replaced by its ASCII digit.
 *
 * Normalising costs, and the detector runs on every record, so its cheap first check is one
 * pass over the character codes: texts made of ASCII — nearly all of them — or of letters
 * of the common scripts never get normalised unless they hold enough digits to be scanned.
 */

/** A decimal digit of any script other than ASCII. */
const OTHER_DIGIT = /[^\P{Nd}0-9]/gu;
const DECIMAL_DIGIT = /^\p{Nd}$/u;
const NON_ASCII = /[^\0-\x7f]/;

const isDecimalDigit = (codePoint: number) => DECIMAL_DIGIT.test(String.fromCodePoint(codePoint));

/**
 * The value of a decimal digit. Unicode encodes every script's decimal digits as contiguous
 * runs of ten, zero to nine, so the value is the distance from the start of the run, mod 10.
 */
function digitValue(digit: string): number {
  const codePoint = digit.codePointAt(0)!;
  let zero = codePoint;
  while (isDecimalDigit(zero - 1)) zero--;
  return (codePoint - zero) % 10;
}

/** `text` with every digit it holds written as an ASCII digit (see the module comment). */
export function toAsciiDigits(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.normalize('NFKC').replace(OTHER_DIGIT, (digit) => String(digitValue(digit)));
}

/** The most digits NFKC makes of one character (`⅒` is "1⁄10"). */
const MOST_DIGITS_IN_ONE = 3;

/**
 * Whether the UTF-16 code unit `c` is in a block where no character stands for a digit:
 * Latin, Greek and Cyrillic letters (bar the Cyrillic thousands sign), dashes and quotes,
 * kana, CJK ideographs, Hangul. Text in these scripts skips normalisation in
 * {@link hasDigits}; any other non-ASCII character may stand for up to three digits.
 */
function holdsNoDigit(c: number): boolean {
  return (
    (c >= 0xc0 && c <= 0x24f) ||
    (c >= 0x370 && c <= 0x4ff && c !== 0x482) ||
    (c >= 0x2010 && c <= 0x2027) ||
    (c >= 0x3040 && c <= 0x30ff) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xac00 && c <= 0xd7a3)
  );
}

/**
 * Whether `text` holds at least `least` digits once read as ASCII — the cheap check before a
 * scan, one pass over the character codes. Only when the characters that may stand for
 * digits could make up the difference is the text normalised and counted again.
 */
export function hasDigits(text: string, least: number): boolean {
  let digits = 0;
  let others = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (++digits >= least) return true;
    } else if (c > 0x7f && !holdsNoDigit(c)) others++;
  }
  if (digits + others * MOST_DIGITS_IN_ONE < least) return false;
  digits = 0;
  const normal = toAsciiDigits(text);
  for (let i = 0; i < normal.length; i++) {
    const c = normal.charCodeAt(i);
    if (c >= 48 && c <= 57 && ++digits >= least) return true;
  }
  return false;
}
