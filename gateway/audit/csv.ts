/**
 * CSV (RFC 4180) for audit exports: fields with a comma, a quote, a line break or outer
 * spaces are quoted, quotes doubled; lines end in CRLF; objects are written as their JSON.
 * Text that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or
 * CR — OWASP "CSV injection") is prefixed with `'`: an export is opened by people, and an
 * actor name or an error message is text that other people chose. JSONL exports are exact.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** One CSV field. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : JSON.stringify(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line (with its CRLF). */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
