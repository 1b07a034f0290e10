/**
 * Small readers for untyped definition values.
 *
 * The cross-checks run on the raw value even when the schema rejected parts of it (so one bad
 * step does not hide the problems of the others); these helpers read it without trusting it.
 */
import type { PathSegment } from './path.js';

/** True for a plain object (not null, not a list). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` inside `root`, or undefined when any step is missing. */
export function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let current: unknown = root;
  for (const segment of path) {
    if (typeof segment === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[segment];
    } else {
      if (!isRecord(current)) return undefined;
      current = current[segment];
    }
  }
  return current;
}

/** A short description of a value's type for messages: `string`, `list`, `mapping`, ... */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'mapping';
  return typeof value;
}

/** `value` when it is a string, else undefined. */
export function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}
