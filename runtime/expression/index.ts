/**
 * The expression language of DECISION route `condition`s and LOOP `while_condition`s.
 *
 * Definitions are data, often written by someone other than the operator running them, so
 * conditions are parsed by a small grammar and walked as a tree — never handed to `eval` or
 * `new Function`, which would let a definition run arbitrary code inside the runtime.
 * Parsing happens once at definition load, so a typo fails the load with its column instead
 * of failing a workflow halfway through.
 *
 * The language, loosest binding first (as in Python):
 * - `or` / `||`, `and` / `&&` — short-circuit, always yield a boolean (Python truthiness:
 *   null, false, 0, '', [] and {} are false);
 * - `not` / `!` — note that `!` binds like `not`: `!a == b` means `not (a == b)`;
 * - `== != < <= > >=`, `in`, `not in` — equality is structural and never coerces (`1 == '1'`
 *   is false); ordering compares two numbers or two strings, is false when either side is
 *   null (a missing path), and is an EXPRESSION_TYPE_MISMATCH error for anything else
 *   (`amount > '10000'`, booleans, lists); membership looks in lists, substrings and object
 *   keys. Comparisons do not chain: `a < b < c` is a syntax error;
 * - `+ -`, then `* / %`, then unary `-` — `+` adds numbers and concatenates two strings or
 *   two lists; anything else is an EXPRESSION_TYPE_MISMATCH error, and division or remainder
 *   by zero an EXPRESSION_EVALUATION error.
 *   `%` follows JavaScript (the sign of the dividend);
 * - literals (`1`, `2.5e3`, `'s'`, `"s"` with backslash escapes, `true false null`, also
 *   `True False None`), list literals (`status in ['A', 'B']`), parentheses, paths (`state.a.b`, bare `a.b` meaning `state.a.b`,
 *   `context.loop_index`, `a[0]`, `a['k']`; a missing path is null) and the functions
 *   `len lower upper abs min max round exists` (`exists(a.b)` takes the path itself and is
 *   true when it resolves, even to null). `round` rounds half away from zero; `len` counts
 *   code points.
 *
 * Texts longer than {@link MAX_SOURCE_LENGTH}, nested deeper than {@link MAX_NESTING} or
 * with trees deeper than {@link MAX_TREE_DEPTH} are syntax errors, so a hostile definition
 * cannot exhaust the stack.
 */
import type { Expression } from './ast.js';
import { evaluateExpression, type EvaluationTrace, type ExpressionScope } from './evaluate.js';
import { parseExpression } from './parse.js';

export type {
  BinaryExpression,
  BinaryOperator,
  CallExpression,
  ExistsExpression,
  Expression,
  FunctionName,
  ListExpression,
  LiteralExpression,
  LogicalExpression,
  PathExpression,
  UnaryExpression,
} from './ast.js';
export { BINARY_OPERATORS, FUNCTION_NAMES } from './ast.js';
export {
  ExpressionEvaluationError,
  ExpressionSyntaxError,
  ExpressionTypeError,
  type OperandTypes,
} from './errors.js';
export { evaluateExpression, type EvaluationTrace, type ExpressionScope } from './evaluate.js';
export { formatExpression } from './format.js';
export { MAX_NESTING, MAX_SOURCE_LENGTH, MAX_TREE_DEPTH } from './limits.js';
export { parseExpression } from './parse.js';
export {
  formatPath,
  formatPathSegment,
  parsePath,
  resolvePath,
  type ParsedPath,
  type PathSegment,
} from './path.js';
export { isTruthy } from './values.js';

/** Parsed expressions by source text: a definition's few conditions are parsed once, not per run. */
const parsed = new Map<string, Expression>();
/** Most sources kept; past it the cache starts over (sources come from definitions). */
const MAX_PARSED = 1000;

/**
 * Parse `source` (once per process for a given text: trees are never changed by evaluation)
 * and return a function that evaluates it against any scope. Throws
 * {@link ExpressionSyntaxError} immediately when `source` does not parse.
 */
export function compileExpression(
  source: string,
): (scope: ExpressionScope, trace?: EvaluationTrace) => unknown {
  let expr = parsed.get(source);
  if (expr === undefined) {
    expr = parseExpression(source);
    if (parsed.size >= MAX_PARSED) parsed.clear();
    parsed.set(source, expr);
  }
  const tree = expr;
  return (scope, trace) => evaluateExpression(tree, scope, trace);
}
