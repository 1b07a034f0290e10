/**
 * Merging step results into workflow state: `merge_strategy` (SHALLOW | DEEP) and
 * `merge_conflict_behavior` (PREFER_NEW | PREFER_EXISTING | RAISE_ERROR), docs/architecture.md#merging.
 *
 * One implementation serves STANDARD results, PARALLEL task results ({@link mergeAll}) and
 * resumed input, so a conflict means the same thing wherever it is raised.
 */
export { MergeConflictError, UnsafeMergeKeyError } from './errors.js';
export { mergeAll, mergeState, type MergeOptions } from './mergeState.js';
