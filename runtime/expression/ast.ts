/**
 * Syntax tree of the expression language. Nodes carry no source positions, so a tree parsed
 * from formatted text is structurally equal to the tree that was formatted.
 */
import type { PathSegment } from './path.js';

/** Built-in functions callable by name; `exists` takes a path rather than a value. */
export const FUNCTION_NAMES = [
  'len',
  'lower',
  'upper',
  'abs',
  'min',
  'max',
  'round',
  'exists',
] as const;

/** Name of a built-in function. */
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** Binary operators with value operands (logical `and` / `or` are separate nodes). */
export const BINARY_OPERATORS = [
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'in',
  'not in',
  '+',
  '-',
  '*',
  '/',
  '%',
] as const;

/** A binary operator. */
export type BinaryOperator = (typeof BINARY_OPERATORS)[number];

/** The comparison and membership operators; they do not chain (`a < b < c` is rejected). */
export const COMPARISON_OPERATORS: readonly BinaryOperator[] = [
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'in',
  'not in',
];

/** A constant: number, string, boolean or null. */
export interface LiteralExpression {
  readonly kind: 'literal';
  readonly value: number | string | boolean | null;
}

/** A list literal, e.g. `['APPROVED', 'SETTLED']`. */
export interface ListExpression {
  readonly kind: 'list';
  readonly items: readonly Expression[];
}

/** A path into the state or the context, e.g. `state.a[0]` or `context.loop_index`. */
export interface PathExpression {
  readonly kind: 'path';
  readonly root: 'state' | 'context';
  readonly segments: readonly PathSegment[];
}

/** `not x` (also written `!x`) or `-x`. */
export interface UnaryExpression {
  readonly kind: 'unary';
  readonly operator: 'not' | '-';
  readonly operand: Expression;
}

/** Arithmetic, comparison and membership. */
export interface BinaryExpression {
  readonly kind: 'binary';
  readonly operator: BinaryOperator;
  readonly left: Expression;
  readonly right: Expression;
}

/** Short-circuit `and` / `or` (also written `&&` / `||`); the result is a boolean. */
export interface LogicalExpression {
  readonly kind: 'logical';
  readonly operator: 'and' | 'or';
  readonly left: Expression;
  readonly right: Expression;
}

/** A call to a built-in function other than `exists`. */
export interface CallExpression {
  readonly kind: 'call';
  readonly name: Exclude<FunctionName, 'exists'>;
  readonly args: readonly Expression[];
}

/** `exists(path)`: true when the path resolves to any value, null included. */
export interface ExistsExpression {
  readonly kind: 'exists';
  readonly path: PathExpression;
}

/** Any expression node. */
export type Expression =
  | LiteralExpression
  | ListExpression
  | PathExpression
  | UnaryExpression
  | BinaryExpression
  | LogicalExpression
  | CallExpression
  | ExistsExpression;

/** Binding strength, loosest first, as in Python. */
export const PRECEDENCE = {
  or: 1,
  and: 2,
  not: 3,
  comparison: 4,
  additive: 5,
  multiplicative: 6,
  unary: 7,
  primary: 8,
} as const;

/** How tightly `expr` binds, used by the parser's levels and the formatter's parentheses. */
export function precedenceOf(expr: Expression): number {
  switch (expr.kind) {
    case 'logical':
      return PRECEDENCE[expr.operator];
    case 'unary':
      return expr.operator === 'not' ? PRECEDENCE.not : PRECEDENCE.unary;
    case 'binary':
      if (COMPARISON_OPERATORS.includes(expr.operator)) return PRECEDENCE.comparison;
      return expr.operator === '+' || expr.operator === '-'
        ? PRECEDENCE.additive
        : PRECEDENCE.multiplicative;
    case 'literal':
      return typeof expr.value === 'number' && expr.value < 0
        ? PRECEDENCE.unary
        : PRECEDENCE.primary;
    case 'list':
    case 'path':
    case 'call':
    case 'exists':
      return PRECEDENCE.primary;
    default:
      return assertNever(expr);
  }
}

/** Exhaustiveness guard for switches over closed unions. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
