/**
 * Issues while they are being collected, addressed by path segments.
 *
 * Checks report against segments, not text, so the loader can walk the YAML document to the
 * exact node (and point at a misspelt *key* rather than its value) before the path is
 * rendered for people.
 */
import type { DefinitionIssue, DefinitionIssueCode, DefinitionIssueSeverity } from './errors.js';
import { formatPath, type PathSegment } from './path.js';

/** An issue before location: path as segments, plus which part of the node to point at. */
export interface RawIssue {
  severity: DefinitionIssueSeverity;
  code: DefinitionIssueCode;
  path: PathSegment[];
  message: string;
  /** `'key'`: point at the mapping key of the last segment (unknown keys); default the value. */
  at?: 'key' | 'value';
}

/** An error-severity issue. */
export function errorIssue(
  code: DefinitionIssueCode,
  path: PathSegment[],
  message: string,
  at?: 'key',
): RawIssue {
  return at === undefined
    ? { severity: 'error', code, path, message }
    : { severity: 'error', code, path, message, at };
}

/** A warning-severity issue. */
export function warningIssue(
  code: DefinitionIssueCode,
  path: PathSegment[],
  message: string,
  at?: 'key',
): RawIssue {
  return at === undefined
    ? { severity: 'warning', code, path, message }
    : { severity: 'warning', code, path, message, at };
}

/** Render a raw issue without a source position (definitions that arrive as JSON). */
export function toDefinitionIssue(
  issue: RawIssue,
  position?: { line: number; column: number },
): DefinitionIssue {
  const base: DefinitionIssue = {
    severity: issue.severity,
    path: formatPath(issue.path),
    message: issue.message,
    code: issue.code,
  };
  return position === undefined ? base : { ...base, line: position.line, column: position.column };
}
