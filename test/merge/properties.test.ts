import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MERGE_CONFLICT_BEHAVIORS,
  MERGE_STRATEGIES,
  type MergeConflictBehavior,
  type MergeStrategy,
} from '../../runtime/definition/index.js';
import { formatPathSegment } from '../../runtime/expression/index.js';
import { MergeConflictError, mergeState } from '../../runtime/merge/index.js';

type Tree = Record<string, unknown>;

const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/** Few keys and small leaves, so both sides often share keys and sometimes agree. */
const key = fc.constantFrom('a', 'b', 'c', 'risk', 'x y');
const leaf = fc.oneof(
  fc.integer({ min: -2, max: 2 }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('s', 't'),
  fc.array(fc.integer({ min: 0, max: 1 }), { maxLength: 2 }),
);
const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.dictionary(key, fc.oneof({ maxDepth: 3 }, leaf, tie('tree')), {
    maxKeys: 4,
    noNullPrototype: true,
  }),
}));
function hasUnsafeKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([k, item]) => UNSAFE.has(k) || hasUnsafeKey(item));
}
/** Arbitrary JSON documents, without keys the merge refuses (at any depth). */
const jsonObject = fc
  .dictionary(fc.string(), fc.jsonValue(), { maxKeys: 6, noNullPrototype: true })
  .filter((value) => !hasUnsafeKey(value));
const object = fc.oneof(tree, jsonObject);

const strategy = fc.constantFrom<MergeStrategy>(...MERGE_STRATEGIES);
const behavior = fc.constantFrom<MergeConflictBehavior>(...MERGE_CONFLICT_BEHAVIORS);

function isPlain(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reference definition of a conflict, independent of the implementation. */
function conflictPaths(current: Tree, updates: Tree, deep: boolean, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [k, update] of Object.entries(updates)) {
    if (!Object.hasOwn(current, k)) continue;
    const path =
      prefix === '' ? formatPathSegment(k).replace(/^\./, '') : prefix + formatPathSegment(k);
    const existing = current[k];
    if (deep && isPlain(existing) && isPlain(update)) {
      paths.push(...conflictPaths(existing, update, deep, path));
    } else if (!isDeepStrictEqual(existing, update)) {
      paths.push(path);
    }
  }
  return paths;
}

/** Every non-object value in `value` with its key path as segments. */
function leaves(value: Tree, prefix: string[] = []): [string[], unknown][] {
  return Object.entries(value).flatMap(([k, item]) =>
    isPlain(item) && Object.keys(item).length > 0
      ? leaves(item, [...prefix, k])
      : [[[...prefix, k], item] as [string[], unknown]],
  );
}

function at(value: unknown, path: string[]): unknown {
  return path.reduce<unknown>((node, k) => (isPlain(node) ? node[k] : undefined), value);
}

function containers(value: unknown, into = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null) {
    into.add(value);
    for (const item of Object.values(value)) containers(item, into);
  }
  return into;
}

function tryMerge(current: Tree, updates: Tree, s: MergeStrategy, b: MergeConflictBehavior) {
  try {
    return mergeState(current, updates, { strategy: s, onConflict: b });
  } catch (error) {
    if (error instanceof MergeConflictError) return error;
    throw error;
  }
}

describe('mergeState properties', () => {
  it('(1) never mutates its inputs and never aliases them', () => {
    fc.assert(
      fc.property(object, object, strategy, behavior, (current, updates, s, b) => {
        const before = structuredClone([current, updates]);
        const result = tryMerge(current, updates, s, b);
        expect([current, updates]).toStrictEqual(before);
        if (result instanceof MergeConflictError) return;
        const inputs = containers([current, updates]);
        for (const node of containers(result)) expect(inputs.has(node)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('(2) every key of updates is present in the result', () => {
    fc.assert(
      fc.property(object, object, strategy, behavior, (current, updates, s, b) => {
        const result = tryMerge(current, updates, s, b);
        if (result instanceof MergeConflictError) return;
        for (const k of Object.keys(updates)) expect(Object.hasOwn(result, k)).toBe(true);
        for (const k of Object.keys(current)) expect(Object.hasOwn(result, k)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('(3) SHALLOW + PREFER_NEW equals {...current, ...updates}', () => {
    fc.assert(
      fc.property(object, object, (current, updates) => {
        const result = mergeState(current, updates, {
          strategy: 'SHALLOW',
          onConflict: 'PREFER_NEW',
        });
        expect(result).toStrictEqual({ ...current, ...updates });
      }),
      { numRuns: 500 },
    );
  });

  it('(4) DEEP + PREFER_NEW: every leaf path of updates holds the update value', () => {
    fc.assert(
      fc.property(object, object, (current, updates) => {
        const result = mergeState(current, updates, { strategy: 'DEEP', onConflict: 'PREFER_NEW' });
        for (const [path, value] of leaves(updates)) {
          if (isPlain(value)) expect(isPlain(at(result, path))).toBe(true);
          else expect(at(result, path)).toStrictEqual(value);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('(5) RAISE_ERROR throws iff a path conflicts, naming exactly those paths', () => {
    fc.assert(
      fc.property(object, object, strategy, (current, updates, s) => {
        const expected = conflictPaths(current, updates, s === 'DEEP');
        const result = tryMerge(current, updates, s, 'RAISE_ERROR');
        if (expected.length === 0) {
          expect(result).not.toBeInstanceOf(MergeConflictError);
        } else {
          expect(result).toBeInstanceOf(MergeConflictError);
          expect([...(result as MergeConflictError).paths].sort()).toEqual([...expected].sort());
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('(5) RAISE_ERROR never throws for disjoint keys', () => {
    fc.assert(
      fc.property(object, object, strategy, (left, right, s) => {
        const updates = Object.fromEntries(
          Object.entries(right).filter(([k]) => !Object.hasOwn(left, k)),
        );
        const result = mergeState(left, updates, { strategy: s, onConflict: 'RAISE_ERROR' });
        expect(result).toStrictEqual({ ...left, ...updates });
      }),
      { numRuns: 500 },
    );
  });

  it('(6) merging with {} is the identity, on either side', () => {
    fc.assert(
      fc.property(object, strategy, behavior, (value, s, b) => {
        const options = { strategy: s, onConflict: b };
        const right = mergeState(value, {}, options);
        const left = mergeState({}, value, options);
        expect(right).toStrictEqual(value);
        expect(left).toStrictEqual(value);
        expect(right).not.toBe(value);
      }),
      { numRuns: 500 },
    );
  });
});
