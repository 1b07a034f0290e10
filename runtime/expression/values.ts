/**
 * Value semantics of the expression language: Python-like truthiness, structural equality
 * without coercion, ordering of two numbers or two strings, and membership. None of these
 * throw; the evaluator decides what an ordering of other types means (an error).
 */

/**
 * Python truthiness: `null`, `undefined`, `false`, `0`, `NaN`, `''`, `[]` and `{}` are false;
 * everything else is true.
 */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Name of a value's type as used in error messages: null, boolean, number, string, list, object. */
export function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function definedKeys(value: Record<string, unknown>): string[] {
  return Object.keys(value).filter((key) => value[key] !== undefined);
}

/**
 * Structural equality: arrays element-wise, objects by key set and values (keys holding
 * `undefined` count as absent), primitives with `===` except that `undefined` equals `null`.
 * A number never equals a string.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => deepEqual(item, b[index]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = definedKeys(a);
  if (keys.length !== definedKeys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
}

/**
 * Order two values: a negative, zero or positive number for two numbers or two strings
 * (strings by UTF-16 code unit), `undefined` when they are not comparable.
 */
export function compareValues(a: unknown, b: unknown): number | undefined {
  const numbers = typeof a === 'number' && typeof b === 'number';
  const strings = typeof a === 'string' && typeof b === 'string';
  if (!numbers && !strings) return undefined;
  if (a === b) return 0;
  if (a < b) return -1;
  return a > b ? 1 : undefined; // only NaN is neither
}

/**
 * Membership: an element of a list (structural equality), a substring of a string, or a key
 * of an object. Anything else, e.g. `1 in 'a1'` or `'x' in null`, is false.
 */
export function contains(container: unknown, item: unknown): boolean {
  if (Array.isArray(container)) return container.some((element) => deepEqual(element, item));
  if (typeof container === 'string') return typeof item === 'string' && container.includes(item);
  if (isRecord(container)) {
    return (
      typeof item === 'string' && Object.hasOwn(container, item) && container[item] !== undefined
    );
  }
  return false;
}
