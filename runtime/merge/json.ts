/**
 * Plain-object tests, deep equality and copying for JSON-like state. Copies never assign a
 * `__proto__` key: it is defined as an own data property, so one already present in a value
 * is kept as data and never turns into a prototype change.
 */

/** True for `{}`-style objects (prototype `Object.prototype` or `null`), not arrays or class instances. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Set `target[key]` as an own data property, whatever the key (no `__proto__` setter). */
export function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // only `__proto__` is an accessor on Object.prototype; every other key assigns as data
  if (key !== '__proto__') target[key] = value;
  else
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
}

/**
 * Deep copy of arrays and plain objects; other values (primitives, dates, buffers) are
 * returned as they are. The result shares no array or plain object with `value`.
 */
export function copyJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyJson);
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const key in value)
    if (Object.hasOwn(value, key)) defineOwn(copy, key, copyJson(value[key]));
  return copy;
}

/**
 * Structural equality of JSON-like values: same primitives (NaN equals NaN), arrays equal
 * element by element, plain objects with the same own keys and equal values. Other objects
 * are equal only when they are the same reference.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => jsonEqual(item, b[index]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
