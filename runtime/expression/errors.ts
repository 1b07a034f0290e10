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
 * A well-formed expression could not be evaluated: a function given the wrong type
 * (`len(5)`), a division by zero, or — as the subclass {@link ExpressionTypeError} — an
 * operator given types it does not take.
 */
export class ExpressionEvaluationError extends SaffronError {
  override readonly name: string = 'ExpressionEvaluationError';

  constructor(
    message: string,
    options: SaffronErrorOptions = {},
    code: 'EXPRESSION_EVALUATION' | 'EXPRESSION_TYPE_MISMATCH' = 'EXPRESSION_EVALUATION',
  ) {
    super(code, message, options);
  }
}

/** The types of the two sides of an operator, as {@link ExpressionTypeError} names them. */
export interface OperandTypes {
  /** The operator, e.g. `>` or `+` (`-` for a negation, with no `left`). */
  operator: string;
  left?: string;
  right: string;
}

/**
 * An operator met types it does not take: an ordering (`< <= > >=`) across types, as in
 * `state.amount_minor > '10000'` (a number and a string), or arithmetic on something that is
 * not a number. Such a condition would otherwise quietly be false and route a workflow past
 * a check; code `EXPRESSION_TYPE_MISMATCH`, the expression and both types in `details`.
 */
export class ExpressionTypeError extends ExpressionEvaluationError {
  override readonly name: string = 'ExpressionTypeError';
  /** The operator and the type of each side. */
  readonly operands: OperandTypes;

  constructor(message: string, operands: OperandTypes, options: SaffronErrorOptions = {}) {
    super(
      message,
      { ...options, details: { ...options.details, ...operands } },
      'EXPRESSION_TYPE_MISMATCH',
    );
    this.operands = operands;
  }
}
