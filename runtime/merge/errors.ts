/**
 * Errors of state merging. A conflict names every conflicting key path at once, so an
 * operator fixing a PARALLEL step with RAISE_ERROR sees the whole overlap in one failure
 * instead of discovering it one key per retry.
 */
import { SaffronError } from '../errors.js';

function listPaths(paths: readonly string[]): string {
  return paths.map((path) => `'${path}'`).join(', ');
}

/**
 * A merge with `RAISE_ERROR` found keys present on both sides with different values.
 * `paths` lists every conflicting key path (`risk.score`; arrays are leaves, so never an
 * index). Not retryable: the same inputs conflict again.
 */
export class MergeConflictError extends SaffronError {
  override readonly name = 'MergeConflictError';
  /** Every conflicting key path, in the order the merge met them. */
  readonly paths: string[];

  /**
   * @param paths - the conflicting key paths
   * @param updateIndex - position of the conflicting update in a {@link mergeAll} list
   */
  constructor(paths: readonly string[], updateIndex?: number) {
    const where = updateIndex === undefined ? '' : ` (update #${updateIndex})`;
    super(
      'MERGE_CONFLICT',
      `merge conflict${where}: ${paths.length === 1 ? 'key' : 'keys'} ${listPaths(paths)} ` +
        'already hold different values (merge_conflict_behavior RAISE_ERROR)',
      {
        retryable: false,
        details:
          updateIndex === undefined ? { paths: [...paths] } : { paths: [...paths], updateIndex },
      },
    );
    this.paths = [...paths];
  }
}

/**
 * An update carries a key that could rewrite object prototypes (`__proto__`, `constructor`,
 * `prototype`). Such keys are refused rather than silently dropped, because the engine
 * promises that keys a step returns are never dropped. Not retryable.
 */
export class UnsafeMergeKeyError extends SaffronError {
  override readonly name = 'UnsafeMergeKeyError';
  /** Key paths of the refused keys. */
  readonly paths: string[];

  constructor(paths: readonly string[]) {
    super(
      'MERGE_UNSAFE_KEY',
      `refusing to merge ${listPaths(paths)}: __proto__, constructor and prototype are not ` +
        'allowed as state keys',
      { retryable: false, details: { paths: [...paths] } },
    );
    this.paths = [...paths];
  }
}
