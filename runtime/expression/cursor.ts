/**
 * A read position over a token list, shared by the expression parser and the path reader so
 * both report errors the same way: `expected <what> at column <n>`.
 */
import { ExpressionSyntaxError } from './errors.js';
import { tokenize, type Token, type TokenSymbol } from './tokenize.js';

/** Human-readable description of a token, for error details. */
function describeToken(token: Token): string {
  switch (token.type) {
    case 'end':
      return 'end of expression';
    case 'string':
      return 'a string';
    case 'number':
      return `'${token.value}'`;
    case 'name':
    case 'symbol':
      return `'${token.value}'`;
  }
}

/** Sequential access to the tokens of one source text. */
export class TokenCursor {
  private index = 0;
  private readonly tokens: Token[];

  /** Tokenize `source`; throws {@link ExpressionSyntaxError} on lexical errors. */
  constructor(readonly source: string) {
    this.tokens = tokenize(source);
  }

  /** The token at the read position (the final `end` token once everything is consumed). */
  get current(): Token {
    return this.tokens[this.index] ?? { type: 'end', column: this.source.length + 1 };
  }

  /** The token after the current one. */
  get following(): Token {
    return this.tokens[this.index + 1] ?? { type: 'end', column: this.source.length + 1 };
  }

  /** Consume and return the current token. */
  advance(): Token {
    const token = this.current;
    if (this.index < this.tokens.length - 1) this.index += 1;
    return token;
  }

  /** True when the current token is the symbol `symbol`. */
  isSymbol(symbol: TokenSymbol): boolean {
    const token = this.current;
    return token.type === 'symbol' && token.value === symbol;
  }

  /** True when the current token is the bare word `word` (a keyword or name). */
  isWord(word: string): boolean {
    const token = this.current;
    return token.type === 'name' && token.value === word;
  }

  /** Consume the symbol `symbol` if it is next; report whether it was. */
  acceptSymbol(symbol: TokenSymbol): boolean {
    if (!this.isSymbol(symbol)) return false;
    this.advance();
    return true;
  }

  /** Consume the symbol `symbol` or throw `expected '<symbol>' at column <n>`. */
  expectSymbol(symbol: TokenSymbol): Token {
    if (!this.isSymbol(symbol)) this.fail(`'${symbol}'`);
    return this.advance();
  }

  /** Throw `expected <expected> at column <n>` for `token` (default: the current token). */
  fail(expected: string, token: Token = this.current): never {
    throw this.error(`expected ${expected}`, token.column, {
      expected,
      found: describeToken(token),
    });
  }

  /** Build a syntax error `<message> at column <column>`. */
  error(message: string, column: number, details?: Record<string, unknown>): ExpressionSyntaxError {
    return new ExpressionSyntaxError(`${message} at column ${column}`, {
      column,
      source: this.source,
      ...(details === undefined ? {} : { details }),
    });
  }
}
