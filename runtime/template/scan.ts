/**
 * Splitting a string into literal text and `{{ ... }}` references. A reference ends at the
 * first `}}` outside a quoted key (`{{ state['}}'] }}` works); there is no escape for a
 * literal `{{`, and an opening `{{` without its `}}` is a syntax error rather than text, so a
 * typo never reaches an HTTP header verbatim.
 */
import { TemplateError } from './errors.js';
import { atKeyPath, parseReference, type TemplateReference } from './reference.js';

/** Literal text, or a reference to resolve. */
export type TemplatePart = string | TemplateReference;

/**
 * Split `text` into parts; a string without `{{` is one text part.
 * Throws {@link TemplateError} `TEMPLATE_SYNTAX` naming the column and `keyPath`.
 */
export function scanTemplate(text: string, keyPath: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let index = 0;
  for (;;) {
    const open = text.indexOf('{{', index);
    if (open === -1) break;
    if (open > index) parts.push(text.slice(index, open));
    const close = findClose(text, open + 2);
    if (close === -1) {
      throw syntaxError(`unclosed '{{' at column ${open + 1}`, text, keyPath);
    }
    const source = text.slice(open + 2, close).trim();
    if (source === '') throw syntaxError(`empty '{{ }}' at column ${open + 1}`, text, keyPath);
    parts.push(parseReference(source, keyPath));
    index = close + 2;
  }
  if (index < text.length) parts.push(text.slice(index));
  return parts;
}

/**
 * Index of the `}}` closing a reference that starts at `from`, skipping quoted keys; -1 when
 * another `{{` or the end comes first. An unterminated quote falls back to the first `}}` so
 * the reference parser reports the quote.
 */
function findClose(text: string, from: number): number {
  let quote: string | undefined;
  for (let index = from; index < text.length; index += 1) {
    const char = text.charAt(index);
    const pair = text.startsWith(char, index + 1);
    if (quote !== undefined) {
      if (char === '\\') index += 1;
      else if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (pair && char === '}') return index;
    else if (pair && char === '{') return -1;
  }
  return quote === undefined ? -1 : text.indexOf('}}', from);
}

function syntaxError(problem: string, text: string, keyPath: string): TemplateError {
  return new TemplateError('TEMPLATE_SYNTAX', `${problem} in template${atKeyPath(keyPath)}`, {
    details: keyPath === '' ? { template: text } : { template: text, path: keyPath },
  });
}
