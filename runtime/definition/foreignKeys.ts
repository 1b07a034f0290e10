/**
 * Keys borrowed from other workflow engines.
 *
 * Definitions written for other engines carry keys Saffron has no use for (step
 * `description`, `input_model`, `required_input`, top-level `initial_state_model`, ...).
 * Rejecting them would force authors to edit working files before a first run; keeping them
 * would leak meaningless fields into snapshots and hashes. They are dropped with a warning.
 */
import { FOREIGN_KEYS } from './kinds.js';
import type { PathSegment } from './path.js';
import { warningIssue, type RawIssue } from './rawIssue.js';
import { isRecord } from './values.js';

/** Top level: `description` is a real Saffron key there. */
const TOP_LEVEL_FOREIGN = FOREIGN_KEYS.filter((key) => key !== 'description');

function strip(
  record: Record<string, unknown>,
  keys: readonly string[],
  path: PathSegment[],
  warnings: RawIssue[],
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (keys.includes(key)) {
      warnings.push(
        warningIssue(
          'FOREIGN_KEY',
          [...path, key],
          `key '${key}' is not used by Saffron and is ignored`,
          'key',
        ),
      );
    } else {
      copy[key] = value;
    }
  }
  return copy;
}

function stripSteps(steps: unknown, path: PathSegment[], warnings: RawIssue[]): unknown {
  if (!Array.isArray(steps)) return steps;
  return steps.map((step: unknown, index) => {
    if (!isRecord(step)) return step;
    const stepPath = [...path, index];
    const copy = strip(step, FOREIGN_KEYS, stepPath, warnings);
    if ('loop_body' in copy) {
      copy.loop_body = stripSteps(copy.loop_body, [...stepPath, 'loop_body'], warnings);
    }
    return copy;
  });
}

/**
 * A copy of `input` without foreign keys (top level and every step, LOOP bodies included),
 * and one warning per key removed. The input is not modified.
 */
export function stripForeignKeys(input: unknown): { value: unknown; warnings: RawIssue[] } {
  if (!isRecord(input)) return { value: input, warnings: [] };
  const warnings: RawIssue[] = [];
  const value = strip(input, TOP_LEVEL_FOREIGN, [], warnings);
  if ('steps' in value) value.steps = stripSteps(value.steps, ['steps'], warnings);
  return { value, warnings };
}
