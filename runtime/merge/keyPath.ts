/**
 * Key paths in merge errors, written like template and expression paths (`risk.score`,
 * `limits['per-day']`) so the path in an error can be pasted into a condition.
 */
import { formatPathSegment } from '../expression/index.js';

/** The path of `key` under `base` (`''` is the top level). */
export function childPath(base: string, key: string): string {
  const text = formatPathSegment(key);
  return base === '' && text.startsWith('.') ? text.slice(1) : base + text;
}
