/**
 * Recursive-descent parser, one method per precedence level (loosest first, like Python):
 * or < and < not < comparison/in < + - < * / % < unary - < primary.
 * Size limits live in `limits.ts`.
 */
import {
  COMPARISON_OPERATORS,
  FUNCTION_NAMES,
  type BinaryOperator,
  type Expression,
  type FunctionName,
  type PathExpression,
} from './ast.js';
import { TokenCursor } from './cursor.js';
import { ExpressionSyntaxError } from './errors.js';
import { arityOf } from './functions.js';
import { DepthGuard, MAX_SOURCE_LENGTH } from './limits.js';
import { readPathSegments } from './path.js';
import type { TokenSymbol } from './tokenize.js';

const LITERAL_WORDS: Readonly<Record<string, boolean | null>> = {
  true: true,
  false: false,
  null: null,
  True: true,
  False: false,
  None: null,
};
const RESERVED = new Set(['and', 'or', 'not', 'in']);

class Parser {
  private readonly guard: DepthGuard;

  constructor(private readonly cursor: TokenCursor) {
    this.guard = new DepthGuard(cursor);
  }

  parseAll(): Expression {
    const expr = this.parseOr();
    if (this.cursor.current.type !== 'end') this.cursor.fail('an operator or end of expression');
    return expr;
  }

  private parseOr(): Expression {
    let left = this.parseAnd();
    for (let column = this.acceptWord('or', '||'); column; column = this.acceptWord('or', '||')) {
      left = this.node({ kind: 'logical', operator: 'or', left, right: this.parseAnd() }, column);
    }
    return left;
  }

  private parseAnd(): Expression {
    let left = this.parseNot();
    for (let column = this.acceptWord('and', '&&'); column; column = this.acceptWord('and', '&&')) {
      left = this.node({ kind: 'logical', operator: 'and', left, right: this.parseNot() }, column);
    }
    return left;
  }

  private parseNot(): Expression {
    const column = this.acceptWord('not', '!');
    if (column === undefined) return this.parseComparison();
    const operand = this.nested(column, () => this.parseNot());
    return this.node({ kind: 'unary', operator: 'not', operand }, column);
  }

  private parseComparison(): Expression {
    const left = this.parseAdditive();
    const operator = this.peekComparison();
    if (operator === undefined) return left;
    const column = this.cursor.advance().column;
    if (operator === 'not in') this.cursor.advance();
    const right = this.parseAdditive();
    if (this.peekComparison() !== undefined) {
      throw this.cursor.error(
        "comparisons cannot be chained (use 'and')",
        this.cursor.current.column,
      );
    }
    return this.node({ kind: 'binary', operator, left, right }, column);
  }

  private parseAdditive(): Expression {
    return this.parseBinary(['+', '-'], () => this.parseMultiplicative());
  }

  private parseMultiplicative(): Expression {
    return this.parseBinary(['*', '/', '%'], () => this.parseUnary());
  }

  private parseBinary(symbols: readonly TokenSymbol[], operand: () => Expression): Expression {
    let left = operand();
    for (;;) {
      const token = this.cursor.current;
      if (token.type !== 'symbol' || !symbols.includes(token.value)) return left;
      this.cursor.advance();
      const operator = token.value as BinaryOperator;
      left = this.node({ kind: 'binary', operator, left, right: operand() }, token.column);
    }
  }

  private parseUnary(): Expression {
    const token = this.cursor.current;
    if (!this.cursor.acceptSymbol('-')) return this.parsePrimary();
    const operand = this.nested(token.column, () => this.parseUnary());
    return this.node({ kind: 'unary', operator: '-', operand }, token.column);
  }

  private parsePrimary(): Expression {
    const token = this.cursor.current;
    if (token.type === 'number' || token.type === 'string') {
      this.cursor.advance();
      return this.node({ kind: 'literal', value: token.value }, token.column);
    }
    if (this.cursor.acceptSymbol('[')) {
      const items = this.nested(token.column, () => this.parseList(']'));
      return this.node({ kind: 'list', items }, token.column);
    }
    if (this.cursor.acceptSymbol('(')) {
      const inner = this.nested(token.column, () => this.parseOr());
      this.cursor.expectSymbol(')');
      return inner;
    }
    if (token.type !== 'name' || RESERVED.has(token.value))
      return this.cursor.fail('an expression');
    this.cursor.advance();
    const literal = LITERAL_WORDS[token.value];
    if (literal !== undefined) return this.node({ kind: 'literal', value: literal }, token.column);
    if (this.cursor.isSymbol('(')) return this.parseCall(token.value, token.column);
    const segments = readPathSegments(this.cursor);
    const head = token.value;
    const path: PathExpression =
      head === 'state' || head === 'context'
        ? { kind: 'path', root: head, segments }
        : { kind: 'path', root: 'state', segments: [head, ...segments] };
    return this.node(path, token.column);
  }

  private parseCall(name: string, column: number): Expression {
    if (!isFunctionName(name)) {
      throw this.cursor.error(`unknown function '${name}'`, column, { known: FUNCTION_NAMES });
    }
    this.cursor.expectSymbol('(');
    const args = this.nested(column, () => this.parseList(')'));
    const { min, max } = arityOf(name);
    if (args.length < min || args.length > max) {
      const count =
        min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
      const noun = max === 1 || (min === 1 && max === Infinity) ? 'argument' : 'arguments';
      throw this.cursor.error(`${name}() takes ${count} ${noun}, got ${args.length}`, column);
    }
    if (name !== 'exists') return this.node({ kind: 'call', name, args }, column);
    const [path] = args;
    if (path?.kind !== 'path') throw this.cursor.error('exists() expects a path', column);
    return this.node({ kind: 'exists', path }, column);
  }

  /** Comma-separated expressions up to the closing symbol (call arguments, list items). */
  private parseList(close: ')' | ']'): Expression[] {
    const items: Expression[] = [];
    if (this.cursor.acceptSymbol(close)) return items;
    do items.push(this.parseOr());
    while (this.cursor.acceptSymbol(','));
    this.cursor.expectSymbol(close);
    return items;
  }

  /** Consume the keyword `word` or its symbol spelling; return its column if it was there. */
  private acceptWord(word: string, symbol: TokenSymbol): number | undefined {
    const token = this.cursor.current;
    if (!this.cursor.isWord(word) && !this.cursor.isSymbol(symbol)) return undefined;
    this.cursor.advance();
    return token.column;
  }

  private peekComparison(): BinaryOperator | undefined {
    const token = this.cursor.current;
    if (token.type === 'symbol') {
      return COMPARISON_OPERATORS.find((operator) => operator === token.value);
    }
    if (this.cursor.isWord('in')) return 'in';
    const next = this.cursor.following;
    const notIn = this.cursor.isWord('not') && next.type === 'name' && next.value === 'in';
    return notIn ? 'not in' : undefined;
  }

  private nested<T>(column: number, parse: () => T): T {
    return this.guard.nested(column, parse);
  }

  private node<T extends Expression>(expr: T, column: number): T {
    return this.guard.node(expr, column);
  }
}

function isFunctionName(name: string): name is FunctionName {
  return (FUNCTION_NAMES as readonly string[]).includes(name);
}

/**
 * Parse expression text into a syntax tree. Throws {@link ExpressionSyntaxError} naming what
 * was expected and the 1-based column, e.g. `expected ')' at column 14`.
 */
export function parseExpression(source: string): Expression {
  if (source.length > MAX_SOURCE_LENGTH) {
    throw new ExpressionSyntaxError(
      `expression is longer than ${MAX_SOURCE_LENGTH} characters at column ${MAX_SOURCE_LENGTH + 1}`,
      { column: MAX_SOURCE_LENGTH + 1, source },
    );
  }
  return new Parser(new TokenCursor(source)).parseAll();
}
