/**
 * Deep, non-mutating traversal of JSON-like values that rewrites string leaves, tracking the
 * key path (`http_config.headers.Authorization`, `items[0]`) for error messages.
 */
import { formatPathSegment, type PathSegment } from '../expression/index.js';

/** The key path of `segment` inside `base` (`''` is the top level). */
export function childKeyPath(base: string, segment: PathSegment): string {
  const text = formatPathSegment(segment);
  return base === '' && text.startsWith('.') ? text.slice(1) : base + text;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Copy `value`, replacing every string leaf by `visit(text, keyPath)`. Arrays and plain
 * objects are copied (keys unchanged); other values are returned as they are.
 */
export function mapStrings(
  value: unknown,
  keyPath: string,
  visit: (text: string, keyPath: string) => unknown,
): unknown {
  if (typeof value === 'string') return visit(value, keyPath);
  if (Array.isArray(value)) {
    return value.map((item, index) => mapStrings(item, childKeyPath(keyPath, index), visit));
  }
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        mapStrings(item, childKeyPath(keyPath, key), visit),
      ]),
    );
  }
  return value;
}
