/**
 * Errors raised by the expression language: one for text that does not parse (reported at
 * definition load, with the column) and one for values that cannot be combined at run time.
 */
import { SaffronError, type SaffronErrorOptions } from '../errors.js';

/** Options of {@link ExpressionSyntaxError}. */
export interface ExpressionSyntaxErrorOptions extends SaffronErrorOptions {
  /** 1-based column in `source` where the problem was found. */
  column: number;
  /** The expression text that failed to parse. */
  source: string;
}

/**
 * The expression text is malformed, too long or too deeply nested. The message names what
 * was expected and where, e.g. `expected ')' at column 14`.
 */
export class ExpressionSyntaxError extends SaffronError {
  override readonly name = 'ExpressionSyntaxError';
  /** 1-based column of the offending character or token. */
  readonly column: number;
  /** The expression text that failed to parse. */
  readonly source: string;

  constructor(message: string, options: ExpressionSyntaxErrorOptions) {
    super('EXPRESSION_SYNTAX', message, {
      ...options,
      details: { column: options.column, source: options.source, ...options.details },
    });
    this.column = options.column;
    this.source = options.source;
  }
}

/**
 * A well-formed expression combined values it cannot combine, e.g. `'a' + 1`, `-'x'`,
 * `len(null)` or a division by zero. Missing paths never cause this: they evaluate to null.
 */
export class ExpressionEvaluationError extends SaffronError {
  override readonly name = 'ExpressionEvaluationError';

  constructor(message: string, options: SaffronErrorOptions = {}) {
    super('EXPRESSION_EVALUATION', message, options);
  }
}
