/**
 * Tree-walking evaluator. Paths that do not resolve are null, and a trace, when given,
 * records each one read, so a route decided on a missing value can say which. Equality,
 * membership and boolean logic never throw. An ordering across types (`3 > '2'`) and
 * arithmetic on anything but numbers throw {@link ExpressionTypeError}: quietly false, such a
 * condition once let a refund skip its review. A division by zero and a function given the
 * wrong type throw {@link ExpressionEvaluationError}.
 */
import { assertNever, type BinaryExpression, type Expression, type PathExpression } from './ast.js';
import { ExpressionEvaluationError, ExpressionTypeError, type OperandTypes } from './errors.js';
import { formatExpression } from './format.js';
import { FUNCTIONS } from './functions.js';
import { formatPath, resolvePath } from './path.js';
import { compareValues, contains, deepEqual, isTruthy, typeName } from './values.js';

/** The values an expression can read: `state.*` (and bare paths) and `context.*`. */
export interface ExpressionScope {
  state: Record<string, unknown>;
  context?: Record<string, unknown>;
}

/** What an evaluation read that was not there; pass one to {@link evaluateExpression} to fill. */
export interface EvaluationTrace {
  /** Each path read that did not resolve (`state.amount.minor`), once, in reading order. */
  missingPaths: string[];
}

function lookup(path: PathExpression, scope: ExpressionScope): unknown {
  return resolvePath(path.root === 'state' ? scope.state : scope.context, path.segments);
}

/**
 * Evaluate `expr` against `scope`. Returns the value (booleans for comparisons and logic).
 * Throws {@link ExpressionTypeError} for an operator given types it does not take and
 * {@link ExpressionEvaluationError} for a division by zero or a function's wrong argument.
 * Paths that did not resolve are added to `trace.missingPaths` (`exists()` does not count:
 * asking is its purpose).
 */
export function evaluateExpression(
  expr: Expression,
  scope: ExpressionScope,
  trace?: EvaluationTrace,
): unknown {
  const evaluate = (e: Expression) => evaluateExpression(e, scope, trace);
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'list':
      return expr.items.map(evaluate);
    case 'path': {
      const value = lookup(expr, scope);
      if (value === undefined && trace) {
        const text = formatPath(expr.root, expr.segments);
        if (!trace.missingPaths.includes(text)) trace.missingPaths.push(text);
      }
      return value ?? null;
    }
    case 'exists':
      return lookup(expr.path, scope) !== undefined;
    case 'logical': {
      const left = isTruthy(evaluate(expr.left));
      if (expr.operator === 'and' ? !left : left) return left;
      return isTruthy(evaluate(expr.right));
    }
    case 'unary': {
      const operand = evaluate(expr.operand);
      if (expr.operator === 'not') return !isTruthy(operand);
      if (typeof operand !== 'number')
        throw mismatch(expr, `cannot negate a ${typeName(operand)}`, {
          operator: '-',
          right: typeName(operand),
        });
      return -operand;
    }
    case 'binary':
      return applyBinary(expr, evaluate(expr.left), evaluate(expr.right));
    case 'call':
      try {
        return FUNCTIONS[expr.name].apply(expr.args.map(evaluate));
      } catch (error) {
        if (!(error instanceof ExpressionEvaluationError)) throw error;
        throw evaluationError(expr, error.message, error);
      }
    default:
      return assertNever(expr);
  }
}

/**
 * Order two values for `< <= > >=`: two numbers or two strings compare; null on either side
 * (a missing path included) is false; anything else is a type mismatch.
 */
function order(expr: BinaryExpression, left: unknown, right: unknown): number {
  if (left === null || left === undefined || right === null || right === undefined) return NaN;
  const result = compareValues(left, right);
  if (result !== undefined) return result;
  const operands = { operator: expr.operator, left: typeName(left), right: typeName(right) };
  const problem =
    operands.left === operands.right
      ? `cannot order two ${operands.left} values with '${expr.operator}'`
      : `cannot compare ${operands.left} with ${operands.right} using '${expr.operator}'`;
  throw mismatch(expr, problem, operands);
}

function applyBinary(expr: BinaryExpression, left: unknown, right: unknown): unknown {
  switch (expr.operator) {
    case '==':
      return deepEqual(left, right);
    case '!=':
      return !deepEqual(left, right);
    case '<':
      return order(expr, left, right) < 0;
    case '<=':
      return order(expr, left, right) <= 0;
    case '>':
      return order(expr, left, right) > 0;
    case '>=':
      return order(expr, left, right) >= 0;
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
  const operands = { operator: '+', left: typeName(left), right: typeName(right) };
  throw mismatch(expr, `cannot add ${operands.left} and ${operands.right}`, operands);
}

function arithmetic(expr: BinaryExpression, left: unknown, right: unknown): number {
  if (typeof left !== 'number' || typeof right !== 'number') {
    const operands = { operator: expr.operator, left: typeName(left), right: typeName(right) };
    const verb = `apply '${expr.operator}' to`;
    throw mismatch(expr, `cannot ${verb} ${operands.left} and ${operands.right}`, operands);
  }
  if ((expr.operator === '/' || expr.operator === '%') && right === 0) {
    throw evaluationError(expr, 'division by zero');
  }
  if (expr.operator === '-') return left - right;
  if (expr.operator === '*') return left * right;
  return expr.operator === '/' ? left / right : left % right;
}

function evaluationError(
  expr: Expression,
  problem: string,
  cause?: unknown,
): ExpressionEvaluationError {
  const text = formatExpression(expr);
  return new ExpressionEvaluationError(`${problem} in ${text}`, {
    cause,
    details: { expression: text },
  });
}

function mismatch(expr: Expression, problem: string, operands: OperandTypes): ExpressionTypeError {
  const text = formatExpression(expr);
  return new ExpressionTypeError(`${problem} in ${text}`, operands, {
    details: { expression: text },
  });
}
