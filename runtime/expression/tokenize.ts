/**
 * Lexer of the expression language, and the inverse of its string-literal grammar
 * ({@link quoteString}) so the formatter emits exactly what the lexer reads back.
 */
import { ExpressionSyntaxError } from './errors.js';

/** Operator and punctuation symbols, longest first so `<=` wins over `<`. */
const SYMBOLS = [
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '<',
  '>',
  '!',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
] as const;

/** One operator or punctuation symbol. */
export type TokenSymbol = (typeof SYMBOLS)[number];

/** A lexical token; `column` is 1-based. */
export type Token =
  | { readonly type: 'number'; readonly value: number; readonly column: number }
  | { readonly type: 'string'; readonly value: string; readonly column: number }
  | { readonly type: 'name'; readonly value: string; readonly column: number }
  | { readonly type: 'symbol'; readonly value: TokenSymbol; readonly column: number }
  | { readonly type: 'end'; readonly column: number };

/** Comparison operators written the wrong way round, and what was meant. */
const SWAPPED: Readonly<Record<string, string>> = { '=>': '>=', '=<': '<=' };

const NUMBER = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const WHITESPACE = /[ \t\r\n]+/y;
const ESCAPES: Record<string, string> = {
  n: '\n',
  r: '\r',
  t: '\t',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
  '\\': '\\',
  "'": "'",
  '"': '"',
};

/** Split `source` into tokens, ending with an `end` token. Throws {@link ExpressionSyntaxError}. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  const fail = (message: string, at: number): never => {
    throw new ExpressionSyntaxError(`${message} at column ${at + 1}`, { column: at + 1, source });
  };
  const match = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = index;
    return pattern.exec(source)?.[0];
  };
  while (index < source.length) {
    const column = index + 1;
    const char = source.charAt(index);
    const space = match(WHITESPACE);
    const number = match(NUMBER);
    const name = match(NAME);
    if (space !== undefined) {
      index += space.length;
    } else if (number !== undefined) {
      tokens.push({ type: 'number', value: Number(number), column });
      index += number.length;
    } else if (name !== undefined) {
      tokens.push({ type: 'name', value: name, column });
      index += name.length;
    } else if (char === "'" || char === '"') {
      const [value, end] = readString(source, index, fail);
      tokens.push({ type: 'string', value, column });
      index = end;
    } else {
      const symbol = SYMBOLS.find((candidate) => source.startsWith(candidate, index));
      if (symbol === undefined) {
        const swapped = SWAPPED[source.slice(index, index + 2)];
        if (swapped !== undefined)
          fail(
            `unexpected '${source.slice(index, index + 2)}' (did you mean '${swapped}'?)`,
            index,
          );
        const hint = char === '=' ? " (use '==' to compare)" : '';
        fail(`unexpected character '${char}'${hint}`, index);
      } else {
        tokens.push({ type: 'symbol', value: symbol, column });
        index += symbol.length;
      }
    }
  }
  tokens.push({ type: 'end', column: source.length + 1 });
  return tokens;
}

/** Read the quoted string opening at `start`; returns its value and the index after it. */
function readString(
  source: string,
  start: number,
  fail: (message: string, at: number) => never,
): [string, number] {
  const quote = source.charAt(start);
  let value = '';
  let index = start + 1;
  while (index < source.length) {
    const char = source.charAt(index);
    if (char === quote) return [value, index + 1];
    if (char !== '\\') {
      value += char;
      index += 1;
      continue;
    }
    const escape = source.charAt(index + 1);
    const simple = ESCAPES[escape];
    if (simple !== undefined) {
      value += simple;
      index += 2;
    } else if (escape === 'u' && /^[0-9a-fA-F]{4}$/.test(source.slice(index + 2, index + 6))) {
      value += String.fromCharCode(parseInt(source.slice(index + 2, index + 6), 16));
      index += 6;
    } else {
      fail(escape === '' ? 'unterminated string' : `unknown escape '\\${escape}'`, index);
    }
  }
  return fail(`unterminated string starting`, start);
}

/** Quote `value` as a single-quoted literal that {@link tokenize} reads back unchanged. */
export function quoteString(value: string): string {
  let out = "'";
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (char === '\\' || char === "'") out += `\\${char}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}'`;
}
