/**
 * Canonical source text of a syntax tree: keywords spelled `and`/`or`/`not`, strings in
 * single quotes, state paths with an explicit `state.` prefix and only the parentheses the
 * precedence rules need. Parsing the result gives back a structurally equal tree.
 */
import { assertNever, precedenceOf, PRECEDENCE, type Expression } from './ast.js';
import { formatPath } from './path.js';
import { quoteString } from './tokenize.js';

/** Format `child`, parenthesised when it binds less tightly than `minimum`. */
function operand(child: Expression, minimum: number): string {
  const text = formatExpression(child);
  return precedenceOf(child) < minimum ? `(${text})` : text;
}

/** Canonical source text for `expr`; `parseExpression(formatExpression(e))` equals `e`. */
export function formatExpression(expr: Expression): string {
  switch (expr.kind) {
    case 'literal':
      if (typeof expr.value === 'string') return quoteString(expr.value);
      return String(expr.value);
    case 'list':
      return `[${expr.items.map(formatExpression).join(', ')}]`;
    case 'path':
      return formatPath(expr.root, expr.segments);
    case 'exists':
      return `exists(${formatExpression(expr.path)})`;
    case 'call':
      return `${expr.name}(${expr.args.map(formatExpression).join(', ')})`;
    case 'unary':
      return expr.operator === 'not'
        ? `not ${operand(expr.operand, PRECEDENCE.not)}`
        : `-${operand(expr.operand, PRECEDENCE.unary)}`;
    case 'logical':
    case 'binary': {
      // Left-associative: a right operand of the same level needs parentheses. Comparisons
      // do not chain, so both of their operands need them at the same level.
      const level = precedenceOf(expr);
      const leftMinimum = level === PRECEDENCE.comparison ? level + 1 : level;
      const left = operand(expr.left, leftMinimum);
      return `${left} ${expr.operator} ${operand(expr.right, level + 1)}`;
    }
    default:
      return assertNever(expr);
  }
}
