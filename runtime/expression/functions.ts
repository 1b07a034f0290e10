/**
 * Built-in functions. Arity is checked when an expression is parsed, argument types when it
 * is evaluated; a wrong type is an {@link ExpressionEvaluationError}, never a silent NaN.
 * `exists` is not here: it receives a path, not a value, and is a node of its own.
 */
import type { FunctionName } from './ast.js';
import { ExpressionEvaluationError } from './errors.js';
import { compareValues, typeName } from './values.js';

/** A function callable from expressions, with its accepted argument counts. */
interface BuiltinFunction {
  readonly minArgs: number;
  readonly maxArgs: number;
  apply(args: readonly unknown[]): unknown;
}

/** Names of functions that take values (every built-in except `exists`). */
export type ValueFunctionName = Exclude<FunctionName, 'exists'>;

function wrongType(name: string, expected: string, value: unknown): ExpressionEvaluationError {
  return new ExpressionEvaluationError(`${name}() expects ${expected}, got ${typeName(value)}`, {
    details: { function: name, expected, actual: typeName(value) },
  });
}

function expectString(name: string, value: unknown): string {
  if (typeof value !== 'string') throw wrongType(name, 'a string', value);
  return value;
}

function expectNumber(name: string, value: unknown): number {
  if (typeof value !== 'number') throw wrongType(name, 'a number', value);
  return value;
}

function length(value: unknown): number {
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length;
  throw wrongType('len', 'a string, list or object', value);
}

/** Move the decimal point of `value` by `places` without binary rounding error (1.005 → 100.5). */
function shiftDecimal(value: number, places: number): number {
  const [mantissa, exponent = '0'] = String(value).split('e');
  return Number(`${mantissa}e${Number(exponent) + places}`);
}

/** Round half away from zero to `digits` decimal places (negative digits round to tens, ...). */
function round(value: unknown, digits: unknown = 0): number {
  const n = expectNumber('round', value);
  const places = expectNumber('round', digits);
  if (!Number.isInteger(places) || Math.abs(places) > 100) {
    throw new ExpressionEvaluationError(`round() expects an integer number of digits`, {
      details: { function: 'round', digits: places },
    });
  }
  if (!Number.isFinite(n)) return n;
  const magnitude = shiftDecimal(Math.round(shiftDecimal(Math.abs(n), places)), -places);
  const result = Math.sign(n) * magnitude;
  return result === 0 ? 0 : result;
}

/** Pick the least (`sign` -1) or greatest (`sign` 1) of numbers or of strings. */
function extreme(name: string, sign: 1 | -1, args: readonly unknown[]): unknown {
  const [first] = args;
  const values: readonly unknown[] = args.length === 1 && Array.isArray(first) ? first : args;
  if (values.length === 0) {
    throw new ExpressionEvaluationError(`${name}() of an empty list`, {
      details: { function: name },
    });
  }
  let best = values[0];
  for (const value of values) {
    const order = compareValues(value, best);
    if (order === undefined) throw wrongType(name, 'numbers or strings of one type', value);
    if (order * sign > 0) best = value;
  }
  return best;
}

/** The built-in value functions, by name. */
export const FUNCTIONS: Readonly<Record<ValueFunctionName, BuiltinFunction>> = {
  len: { minArgs: 1, maxArgs: 1, apply: ([value]) => length(value) },
  lower: { minArgs: 1, maxArgs: 1, apply: ([value]) => expectString('lower', value).toLowerCase() },
  upper: { minArgs: 1, maxArgs: 1, apply: ([value]) => expectString('upper', value).toUpperCase() },
  abs: { minArgs: 1, maxArgs: 1, apply: ([value]) => Math.abs(expectNumber('abs', value)) },
  min: { minArgs: 1, maxArgs: Infinity, apply: (args) => extreme('min', -1, args) },
  max: { minArgs: 1, maxArgs: Infinity, apply: (args) => extreme('max', 1, args) },
  round: { minArgs: 1, maxArgs: 2, apply: ([value, digits]) => round(value, digits) },
};

/** Accepted argument counts of `name`, `exists` included. */
export function arityOf(name: FunctionName): { min: number; max: number } {
  if (name === 'exists') return { min: 1, max: 1 };
  const { minArgs, maxArgs } = FUNCTIONS[name];
  return { min: minArgs, max: maxArgs };
}
