/**
 * Merging a step's result into workflow state (docs/architecture.md#merging).
 *
 * Merges are pure: inputs are never mutated and the result shares no array or plain object
 * with them. The engine hands the merged state to the next step as a working copy that the
 * step may mutate in place; an aliased sub-object would let that mutation leak back into the
 * previous snapshot or into a PARALLEL task's recorded result.
 */
import type { MergeConflictBehavior, MergeStrategy } from '../definition/index.js';
import type { JsonObject } from '../model/json.js';
import { MergeConflictError, UnsafeMergeKeyError } from './errors.js';
import { copyJson, defineOwn, isPlainObject, jsonEqual } from './json.js';
import { childPath } from './keyPath.js';

/** How to merge; both default as in the spec (`SHALLOW`, `PREFER_NEW`). */
export interface MergeOptions {
  /** `SHALLOW`: top-level keys of the update replace; `DEEP`: plain objects merge recursively. */
  strategy?: MergeStrategy;
  /** What to do with a key present on both sides with different values. */
  onConflict?: MergeConflictBehavior;
}

/**
 * Keys refused in updates: assigning them can replace an object's prototype or shadow its
 * constructor, the classic prototype-pollution vector for JSON that came from outside.
 */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

interface MergeWalk {
  readonly deep: boolean;
  readonly preferExisting: boolean;
  readonly conflicts: string[];
  readonly unsafe: string[];
}

/** Collect unsafe keys in the nested plain objects of `value` (DEEP merges walk them all). */
function collectUnsafe(value: unknown, path: string, out: string[]): void {
  if (!isPlainObject(value)) return;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = value[key];
    const keyPath = childPath(path, key);
    if (UNSAFE_KEYS.has(key)) out.push(keyPath);
    else collectUnsafe(item, keyPath, out);
  }
}

function mergeValue(existing: unknown, update: unknown, path: string, walk: MergeWalk): unknown {
  if (walk.deep && isPlainObject(existing) && isPlainObject(update)) {
    return mergeObjects(existing, update, path, walk);
  }
  if (walk.deep) collectUnsafe(update, path, walk.unsafe);
  if (!jsonEqual(existing, update)) walk.conflicts.push(path);
  return copyJson(walk.preferExisting ? existing : update);
}

function mergeObjects(
  current: Record<string, unknown>,
  updates: Record<string, unknown>,
  path: string,
  walk: MergeWalk,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  // for…in, not Object.entries, here and below: a pair per member adds up over every step
  for (const key in current) {
    if (!Object.hasOwn(current, key)) continue;
    const existing = current[key];
    if (!Object.hasOwn(updates, key)) {
      defineOwn(result, key, copyJson(existing));
    } else if (UNSAFE_KEYS.has(key)) {
      walk.unsafe.push(childPath(path, key)); // the merge throws, result is discarded
    } else {
      defineOwn(result, key, mergeValue(existing, updates[key], childPath(path, key), walk));
    }
  }
  for (const key in updates) {
    if (!Object.hasOwn(updates, key) || Object.hasOwn(current, key)) continue;
    const update = updates[key];
    const keyPath = childPath(path, key);
    if (UNSAFE_KEYS.has(key)) {
      walk.unsafe.push(keyPath);
      continue;
    }
    if (walk.deep) collectUnsafe(update, keyPath, walk.unsafe);
    defineOwn(result, key, copyJson(update));
  }
  return result;
}

function isDeep(strategy: MergeStrategy): boolean {
  switch (strategy) {
    case 'SHALLOW':
      return false;
    case 'DEEP':
      return true;
    default: {
      const unknown: never = strategy;
      throw new TypeError(`unknown merge strategy ${String(unknown)}`);
    }
  }
}

function checkBehavior(behavior: MergeConflictBehavior): void {
  switch (behavior) {
    case 'PREFER_NEW':
    case 'PREFER_EXISTING':
    case 'RAISE_ERROR':
      return;
    default: {
      const unknown: never = behavior;
      throw new TypeError(`unknown merge conflict behavior ${String(unknown)}`);
    }
  }
}

function merge(
  current: JsonObject,
  updates: JsonObject,
  options: MergeOptions,
  updateIndex?: number,
): JsonObject {
  const behavior = options.onConflict ?? 'PREFER_NEW';
  checkBehavior(behavior);
  const walk: MergeWalk = {
    deep: isDeep(options.strategy ?? 'SHALLOW'),
    preferExisting: behavior === 'PREFER_EXISTING',
    conflicts: [],
    unsafe: [],
  };
  const result = mergeObjects(current, updates, '', walk);
  if (walk.unsafe.length > 0) throw new UnsafeMergeKeyError(walk.unsafe);
  if (behavior === 'RAISE_ERROR' && walk.conflicts.length > 0) {
    throw new MergeConflictError(walk.conflicts, updateIndex);
  }
  return result;
}

/**
 * Merge `updates` (a step's result) into `current` (workflow state) and return a new object.
 *
 * - `SHALLOW` puts the top-level keys of `updates` onto `current`; `DEEP` merges plain
 *   objects recursively, with arrays and all other values as leaves (replaced, never
 *   concatenated).
 * - A conflict is a key present on both sides with different values (deep equality); under
 *   `DEEP` it is judged at the leaf, so two objects never conflict, their leaves may.
 * - `PREFER_NEW`: the update wins. `PREFER_EXISTING`: the existing value is kept, but keys
 *   only in `updates` are still added. `RAISE_ERROR`: throws {@link MergeConflictError}
 *   listing every conflicting path, and returns nothing.
 *
 * Never mutates its inputs; the result shares no array or plain object with them.
 *
 * @throws {@link UnsafeMergeKeyError} when `updates` has a `__proto__`, `constructor` or
 * `prototype` key (top level for `SHALLOW`; any nested plain object for `DEEP`), whatever the
 * conflict behavior. Such keys are refused, not dropped.
 */
export function mergeState(
  current: JsonObject,
  updates: JsonObject,
  options: MergeOptions = {},
): JsonObject {
  return merge(current, updates, options);
}

/**
 * Fold {@link mergeState} over `updatesList` in order, each update merged into the result of
 * the previous ones; PARALLEL merges task results in declaration order this way. A conflict
 * under `RAISE_ERROR` throws {@link MergeConflictError} with `details.updateIndex` naming the
 * first update that conflicted.
 */
export function mergeAll(
  current: JsonObject,
  updatesList: readonly JsonObject[],
  options: MergeOptions = {},
): JsonObject {
  let result = copyJson(current) as JsonObject;
  updatesList.forEach((updates, index) => {
    result = merge(result, updates, options, index);
  });
  return result;
}
