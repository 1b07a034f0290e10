/**
 * Path syntax (`a.b[0]['k']`) and resolution, the one implementation shared by expressions
 * and templates. Resolution only follows own properties of plain objects and integer indexes
 * of arrays, so `a.constructor` or `a.__proto__` never reach into prototypes, and a missing
 * step yields `undefined` instead of throwing.
 */
import { TokenCursor } from './cursor.js';
import { quoteString } from './tokenize.js';

/** One step of a path: a key (`.name`, `['key']`) or an array index (`[0]`). */
export type PathSegment = string | number;

/** A parsed path: its first name (`state`, `context`, `secrets` or a bare key) and the rest. */
export interface ParsedPath {
  readonly head: string;
  readonly segments: PathSegment[];
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Read `.name`, `[index]` and `['key']` steps from the cursor until something else comes. */
export function readPathSegments(cursor: TokenCursor): PathSegment[] {
  const segments: PathSegment[] = [];
  for (;;) {
    if (cursor.acceptSymbol('.')) {
      const token = cursor.current;
      if (token.type !== 'name') cursor.fail("a name after '.'");
      segments.push(token.value);
      cursor.advance();
    } else if (cursor.acceptSymbol('[')) {
      const token = cursor.current;
      if (token.type === 'string') segments.push(token.value);
      else if (token.type === 'number' && Number.isSafeInteger(token.value)) {
        segments.push(token.value);
      } else cursor.fail('a non-negative integer index or a quoted key');
      cursor.advance();
      cursor.expectSymbol(']');
    } else {
      return segments;
    }
  }
}

/**
 * Parse a standalone path such as `state.items[0]['id']` or `secrets.API_KEY`.
 * Throws {@link ExpressionSyntaxError} with the column when the text is not a path.
 */
export function parsePath(text: string): ParsedPath {
  const cursor: TokenCursor = new TokenCursor(text);
  const first = cursor.current;
  if (first.type !== 'name') cursor.fail('a name');
  cursor.advance();
  const segments = readPathSegments(cursor);
  if (cursor.current.type !== 'end') cursor.fail('end of path');
  return { head: first.value, segments };
}

/**
 * Follow `segments` from `root`. Returns `undefined` when any step is missing, or steps into
 * something that is not a plain object or array; never throws.
 */
export function resolvePath(root: unknown, segments: readonly PathSegment[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (typeof segment !== 'number' || segment < 0 || segment >= current.length) return undefined;
      current = current[segment] as unknown;
    } else if (typeof current === 'object' && current !== null) {
      const key = String(segment);
      if (!Object.hasOwn(current, key)) return undefined;
      current = (current as Record<string, unknown>)[key];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Format one segment as it follows a path: `.name`, `[0]` or `['any key']`. */
export function formatPathSegment(segment: PathSegment): string {
  if (typeof segment === 'number') return `[${segment}]`;
  return IDENTIFIER.test(segment) ? `.${segment}` : `[${quoteString(segment)}]`;
}

/** Format a path from its head and segments, e.g. `state.items[0]['a b']`. */
export function formatPath(head: string, segments: readonly PathSegment[]): string {
  return head + segments.map(formatPathSegment).join('');
}
