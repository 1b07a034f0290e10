/**
 * Definition problems and the error that carries them.
 *
 * A definition is checked completely before it is rejected, so {@link DefinitionError} holds
 * every problem at once, each with the key path, the YAML line/column and a stable code. An
 * author fixing a file one error per run would otherwise need as many runs as mistakes.
 */
import { SaffronError } from '../errors.js';

/** Stable codes of {@link DefinitionIssue}s. */
export const DEFINITION_ISSUE_CODES = [
  'YAML_SYNTAX',
  'DUPLICATE_KEY',
  'ROOT_NOT_MAPPING',
  'UNKNOWN_KEY',
  'FOREIGN_KEY',
  'UNKNOWN_STEP_TYPE',
  'MISSING_FIELD',
  'INVALID_TYPE',
  'INVALID_VALUE',
  'INVALID_FORMAT',
  'OUT_OF_RANGE',
  'INVALID_LENGTH',
  'INVALID_ROUTE',
  'CONFLICTING_KEYS',
  'DUPLICATE_STEP_NAME',
  'DUPLICATE_TASK_NAME',
  'DUPLICATE_DEFAULT_ROUTE',
  'UNREACHABLE_ROUTE',
  'UNKNOWN_TARGET',
  'UNKNOWN_DEPENDENCY',
  'DEPENDENCY_ORDER',
  'CYCLE',
  'EXPRESSION_SYNTAX',
  'TEMPLATE_SYNTAX',
  'SECRET_NOT_ALLOWED',
  'CRON_INVALID',
  'CRON_NEVER_FIRES',
  'MISSING_DEFAULT_RESULT',
  'FUNCTION_PATH_INVALID',
  'FUNCTION_NOT_FOUND',
  'AI_RUNTIME_UNAVAILABLE',
  'INPUT_SCHEMA_INVALID',
  'CONDITION_PATH_INVALID',
  'CONDITION_TYPE_MISMATCH',
] as const;
/** One of {@link DEFINITION_ISSUE_CODES}. */
export type DefinitionIssueCode = (typeof DEFINITION_ISSUE_CODES)[number];

/** Severity of a {@link DefinitionIssue}; only errors reject a definition. */
export type DefinitionIssueSeverity = 'error' | 'warning';

/** One problem found in a definition. */
export interface DefinitionIssue {
  severity: DefinitionIssueSeverity;
  /** Key path, e.g. `steps[2].routes[0].target`; `''` for the document root. */
  path: string;
  /** 1-based YAML line of the node at `path` (or its closest existing ancestor). */
  line?: number;
  /** 1-based YAML column. */
  column?: number;
  message: string;
  code: DefinitionIssueCode;
}

/** Format one issue as `file.yaml:12:5 steps[2].target: message`. */
function formatIssue(issue: DefinitionIssue, file: string | undefined): string {
  const position =
    issue.line === undefined
      ? ''
      : `:${issue.line}${issue.column === undefined ? '' : `:${issue.column}`}`;
  const where = file === undefined ? position.slice(1) : `${file}${position}`;
  const prefix = where === '' ? '' : `${where} `;
  const severity = issue.severity === 'warning' ? 'warning: ' : '';
  return `${prefix}${issue.path === '' ? '(root)' : issue.path}: ${severity}${issue.message}`;
}

/** Render issues one per line, e.g. `flow.yaml:12:5 steps[2].routes[0].target: unknown step`. */
export function formatDefinitionIssues(issues: readonly DefinitionIssue[], file?: string): string {
  return issues.map((issue) => formatIssue(issue, file)).join('\n');
}

/** A workflow definition failed to load; `issues` lists every error (and warning) found. */
export class DefinitionError extends SaffronError {
  override readonly name = 'DefinitionError';
  /** Every problem found, errors and warnings, in file order. */
  readonly issues: DefinitionIssue[];
  /** The definition file, when known. */
  readonly file: string | undefined;

  constructor(issues: DefinitionIssue[], options: { file?: string; cause?: unknown } = {}) {
    const count = (severity: DefinitionIssueSeverity, noun: string): string => {
      const n = issues.filter((issue) => issue.severity === severity).length;
      return `${n} ${noun}${n === 1 ? '' : 's'}`;
    };
    const warnings = issues.some((issue) => issue.severity === 'warning')
      ? `, ${count('warning', 'warning')}`
      : '';
    const subject = options.file === undefined ? '' : `${options.file}: `;
    super(
      'DEFINITION_INVALID',
      `${subject}invalid workflow definition, ${count('error', 'error')}${warnings}\n` +
        formatDefinitionIssues(issues, options.file),
      { cause: options.cause, details: { file: options.file, issues } },
    );
    this.issues = issues;
    this.file = options.file;
  }
}
