/**
 * Rules within one step that span several fields: LOOP mode requirements, unique PARALLEL task
 * names, fallbacks that would have nothing to fall back to, human-input deadline options
 * without a deadline, and AI_INFERENCE `ai_config` rules (`aiChecks.ts`).
 *
 * They run on the raw step (not as zod refinements) because zod skips an object's refinements
 * once any field of it fails, which would hide these problems until the next load.
 */
import { checkAiConfig } from './aiChecks.js';
import type { StepKind } from './kinds.js';
import type { PathSegment } from './path.js';
import { errorIssue, warningIssue, type RawIssue } from './rawIssue.js';
import type { RawStep } from './rawSteps.js';
import { isRecord } from './values.js';

function requireFields(
  record: Record<string, unknown>,
  path: PathSegment[],
  fields: readonly string[],
  because: string,
): RawIssue[] {
  return fields
    .filter((field) => record[field] === undefined)
    .map((field) =>
      errorIssue('MISSING_FIELD', [...path, field], `missing required field '${field}' ${because}`),
    );
}

function checkLoop(step: RawStep): RawIssue[] {
  const { record, path } = step;
  if (record.mode === 'ITERATE') {
    return requireFields(record, path, ['iterate_over', 'item_var_name'], '(mode ITERATE)');
  }
  if (record.mode === 'WHILE') {
    return requireFields(record, path, ['while_condition'], '(mode WHILE)');
  }
  return [];
}

function checkTaskNames(step: RawStep): RawIssue[] {
  const tasks = step.record.tasks;
  if (!Array.isArray(tasks)) return [];
  const seen = new Set<string>();
  const issues: RawIssue[] = [];
  tasks.forEach((task: unknown, index) => {
    if (!isRecord(task) || typeof task.name !== 'string') return;
    if (seen.has(task.name)) {
      issues.push(
        errorIssue(
          'DUPLICATE_TASK_NAME',
          [...step.path, 'tasks', index, 'name'],
          `duplicate task name '${task.name}' in PARALLEL step`,
        ),
      );
    }
    seen.add(task.name);
  });
  return issues;
}

function checkFallback(step: RawStep, configKey: 'ai_config' | 'wasm_config'): RawIssue[] {
  const config = step.record[configKey];
  if (!isRecord(config) || config.fallback_on_error !== 'default') return [];
  if (config.default_result !== undefined) return [];
  return [
    warningIssue(
      'MISSING_DEFAULT_RESULT',
      [...step.path, configKey, 'fallback_on_error'],
      "fallback_on_error is 'default' but no default_result is set; a failure will yield {}",
    ),
  ];
}

function checkHumanDeadline(step: RawStep): RawIssue[] {
  const { record, path } = step;
  if (record.timeout_seconds !== undefined) return [];
  return ['on_timeout', 'timeout_input']
    .filter((field) => record[field] !== undefined)
    .map((field) =>
      errorIssue(
        'MISSING_FIELD',
        [...path, 'timeout_seconds'],
        `'${field}' needs 'timeout_seconds': without a deadline the input never times out`,
      ),
    );
}

/** Multi-field rules of one raw step of a known kind. */
export function checkStepRules(step: RawStep, kind: StepKind): RawIssue[] {
  switch (kind) {
    case 'LOOP':
      return checkLoop(step);
    case 'PARALLEL':
      return checkTaskNames(step);
    case 'AI_INFERENCE':
      return [...checkFallback(step, 'ai_config'), ...checkAiConfig(step)];
    case 'WASM':
      return checkFallback(step, 'wasm_config');
    case 'STANDARD':
    case 'ASYNC':
    case 'DECISION':
    case 'HTTP':
    case 'FIRE_AND_FORGET':
    case 'CRON_SCHEDULE':
      return [];
    case 'HUMAN_IN_LOOP':
      return checkHumanDeadline(step);
    default: {
      const unreachable: never = kind;
      throw new Error(`unhandled step kind ${String(unreachable)}`);
    }
  }
}
