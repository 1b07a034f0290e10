/**
 * Tree-walking evaluator. Paths that do not resolve are null; comparisons, membership and
 * boolean logic never throw; arithmetic on mismatched types, a division by zero and a
 * function given the wrong type throw {@link ExpressionEvaluationError}.
 */
import { assertNever, type BinaryExpression, type Expression, type PathExpression } from './ast.js';
import { ExpressionEvaluationError } from './errors.js';
import { formatExpression } from './format.js';
import { FUNCTIONS } from './functions.js';
import { resolvePath } from './path.js';
import { compareValues, contains, deepEqual, isTruthy, typeName } from './values.js';

/** The values an expression can read: `state.*` (and bare paths) and `context.*`. */
export interface ExpressionScope {
  state: Record<string, unknown>;
  context?: Record<string, unknown>;
}

function lookup(path: PathExpression, scope: ExpressionScope): unknown {
  return resolvePath(path.root === 'state' ? scope.state : scope.context, path.segments);
}

/**
 * Evaluate `expr` against `scope`. Returns the value (booleans for comparisons and logic).
 * Throws {@link ExpressionEvaluationError} only for type errors and division by zero.
 */
export function evaluateExpression(expr: Expression, scope: ExpressionScope): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'list':
      return expr.items.map((item) => evaluateExpression(item, scope));
    case 'path':
      return lookup(expr, scope) ?? null;
    case 'exists':
      return lookup(expr.path, scope) !== undefined;
    case 'logical': {
      const left = isTruthy(evaluateExpression(expr.left, scope));
      if (expr.operator === 'and' ? !left : left) return left;
      return isTruthy(evaluateExpression(expr.right, scope));
    }
    case 'unary': {
      const operand = evaluateExpression(expr.operand, scope);
      if (expr.operator === 'not') return !isTruthy(operand);
      if (typeof operand !== 'number')
        throw typeError(expr, `cannot negate a ${typeName(operand)}`);
      return -operand;
    }
    case 'binary':
      return applyBinary(
        expr,
        evaluateExpression(expr.left, scope),
        evaluateExpression(expr.right, scope),
      );
    case 'call':
      try {
        return FUNCTIONS[expr.name].apply(expr.args.map((arg) => evaluateExpression(arg, scope)));
      } catch (error) {
        if (!(error instanceof ExpressionEvaluationError)) throw error;
        throw typeError(expr, error.message, error);
      }
    default:
      return assertNever(expr);
  }
}

function applyBinary(expr: BinaryExpression, left: unknown, right: unknown): unknown {
  const order = (): number | undefined => compareValues(left, right);
  switch (expr.operator) {
    case '==':
      return deepEqual(left, right);
    case '!=':
      return !deepEqual(left, right);
    case '<':
      return (order() ?? NaN) < 0;
    case '<=':
      return (order() ?? NaN) <= 0;
    case '>':
      return (order() ?? NaN) > 0;
    case '>=':
      return (order() ?? NaN) >= 0;
    case 'in':
      return contains(right, left);
    case 'not in':
      return !contains(right, left);
    case '+':
      return add(expr, left, right);
    case '-':
    case '*':
    case '/':
    case '%':
      return arithmetic(expr, left, right);
    default:
      return assertNever(expr.operator);
  }
}

function add(expr: BinaryExpression, left: unknown, right: unknown): unknown {
  if (typeof left === 'number' && typeof right === 'number') return left + right;
  if (typeof left === 'string' && typeof right === 'string') return left + right;
  if (Array.isArray(left) && Array.isArray(right)) {
    return (left as readonly unknown[]).concat(right as readonly unknown[]);
  }
  throw typeError(expr, `cannot add ${typeName(left)} and ${typeName(right)}`);
}

function arithmetic(expr: BinaryExpression, left: unknown, right: unknown): number {
  if (typeof left !== 'number' || typeof right !== 'number') {
    const verb = `apply '${expr.operator}' to`;
    throw typeError(expr, `cannot ${verb} ${typeName(left)} and ${typeName(right)}`);
  }
  if ((expr.operator === '/' || expr.operator === '%') && right === 0) {
    throw typeError(expr, 'division by zero');
  }
  if (expr.operator === '-') return left - right;
  if (expr.operator === '*') return left * right;
  return expr.operator === '/' ? left / right : left % right;
}

function typeError(expr: Expression, problem: string, cause?: unknown): ExpressionEvaluationError {
  const text = formatExpression(expr);
  return new ExpressionEvaluationError(`${problem} in ${text}`, {
    cause,
    details: { expression: text },
  });
}
