/**
 * Line and column of a key path inside a parsed YAML document.
 *
 * Issues are found on the plain JS value; to point the author at the right line we walk the
 * YAML node tree along the same path. When the path does not exist (a missing field) the
 * closest existing ancestor is used: the step that lacks `function` is the useful place to look.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type LineCounter } from 'yaml';
import type { PathSegment } from './path.js';

/** A 1-based position. */
export interface SourcePosition {
  line: number;
  column: number;
}

type Located = { range?: [number, number, number] | null | undefined } | null | undefined;

function startOf(node: Located): number | undefined {
  return node?.range?.[0];
}

/**
 * Position of the node at `path` (or its closest ancestor). With `at: 'key'` and a path ending
 * in a mapping key, the position of the key itself (used for unknown keys).
 */
export function locate(
  doc: Document,
  lineCounter: LineCounter,
  path: readonly PathSegment[],
  at: 'key' | 'value' = 'value',
): SourcePosition {
  let node: unknown = doc.contents;
  let offset = startOf(doc.contents) ?? 0;
  for (let index = 0; index < path.length; index++) {
    const segment = path[index];
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    let keyOffset: number | undefined;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) =>
          isPair(item) && (isScalar(item.key) ? String(item.key.value) === String(segment) : false),
      );
      if (pair === undefined) break;
      keyOffset = startOf(pair.key as Located);
      next = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      next = node.items[segment];
      if (next === undefined) break;
    } else {
      break;
    }
    const last = index === path.length - 1;
    const valueOffset = startOf(next as Located);
    const isEmptyValue =
      next === null || (isScalar(next) && next.value === null && next.source === '');
    if (
      last &&
      keyOffset !== undefined &&
      (at === 'key' || isEmptyValue || valueOffset === undefined)
    ) {
      offset = keyOffset;
    } else {
      offset = valueOffset ?? keyOffset ?? offset;
    }
    node = next;
  }
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}
