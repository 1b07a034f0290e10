/**
 * Load-time rules of an AI_INFERENCE step's `ai_config` beyond field types: the input source
 * must be a state path, `model_path` must stay inside the steps root, and
 * `postprocessing_params` must make sense for the postprocessing. (Whether the `runtime` has
 * a provider depends on the loading runtime: see `aiRuntimes.ts`.)
 *
 * `postprocessing_params` is the one open mapping of the language — the spec leaves its
 * rules open and definitions from other engines put their own keys there — so unknown keys
 * are warnings, dropped from the parsed definition, rather than errors.
 */
import { posix, win32 } from 'node:path';
import { ExpressionSyntaxError, parsePath } from '../expression/index.js';
import type { PathSegment } from './path.js';
import { errorIssue, warningIssue, type RawIssue } from './rawIssue.js';
import type { RawStep } from './rawSteps.js';
import { didYouMean } from './suggest.js';
import { isRecord } from './values.js';

/** Keys of `postprocessing_params` the runtime reads. */
const POSTPROCESSING_PARAM_KEYS = ['labels', 'output', 'index'];

function checkInputSource(source: unknown, path: PathSegment[]): RawIssue[] {
  if (typeof source !== 'string' || source === '') return [];
  try {
    parsePath(source.startsWith('state.') ? source : `state.${source}`);
    return [];
  } catch (error) {
    if (!(error instanceof ExpressionSyntaxError)) throw error;
    return [
      errorIssue(
        'INVALID_FORMAT',
        path,
        `input_source '${source}' is not a state path (e.g. features or transaction.features): ${error.message}`,
      ),
    ];
  }
}

function checkModelPath(config: Record<string, unknown>, path: PathSegment[]): RawIssue[] {
  const modelPath = config.model_path;
  if (typeof modelPath !== 'string' || modelPath === '') return [];
  const at = [...path, 'model_path'];
  if (posix.isAbsolute(modelPath) || win32.isAbsolute(modelPath)) {
    return [
      errorIssue(
        'INVALID_VALUE',
        at,
        `model_path '${modelPath}' must be relative to the steps root`,
      ),
    ];
  }
  const normalized = posix.normalize(modelPath.replaceAll('\\', '/'));
  if (normalized === '..' || normalized.startsWith('../')) {
    return [errorIssue('INVALID_VALUE', at, `model_path '${modelPath}' leaves the steps root`)];
  }
  if (config.runtime === 'custom') {
    return [
      warningIssue(
        'INVALID_VALUE',
        at,
        'model_path is ignored by runtime custom (its models are functions registered by name)',
      ),
    ];
  }
  return [];
}

function checkParams(config: Record<string, unknown>, path: PathSegment[]): RawIssue[] {
  const params = config.postprocessing_params;
  if (!isRecord(params)) return [];
  const at = [...path, 'postprocessing_params'];
  const issues = Object.keys(params)
    .filter((key) => !POSTPROCESSING_PARAM_KEYS.includes(key))
    .map((key) =>
      warningIssue(
        'UNKNOWN_KEY',
        [...at, key],
        `unknown postprocessing_params key '${key}' is ignored${didYouMean(key, POSTPROCESSING_PARAM_KEYS)}`,
        'key',
      ),
    );
  const labels = params.labels;
  if (config.postprocessing === 'threshold' && Array.isArray(labels) && labels.length !== 2) {
    issues.push(
      errorIssue(
        'INVALID_LENGTH',
        [...at, 'labels'],
        `postprocessing threshold takes two labels [negative, positive], not ${labels.length}`,
      ),
    );
  }
  return issues;
}

/** The `ai_config` rules of one raw AI_INFERENCE step. */
export function checkAiConfig(step: RawStep): RawIssue[] {
  const config = step.record.ai_config;
  if (!isRecord(config)) return [];
  const path = [...step.path, 'ai_config'];
  return [
    ...checkInputSource(config.input_source, [...path, 'input_source']),
    ...checkModelPath(config, path),
    ...checkParams(config, path),
  ];
}
