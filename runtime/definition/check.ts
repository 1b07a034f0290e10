/**
 * Validation of a definition value, whatever its source (YAML file or JSON snapshot).
 *
 * Foreign keys are dropped with warnings, the schema and the cross-checks both run, and the
 * definition is returned only when no error was found. Problems are kept as path segments so
 * the YAML loader can add line numbers.
 */
import { crossCheck } from './crossCheck.js';
import type { DefinitionIssue } from './errors.js';
import { stripForeignKeys } from './foreignKeys.js';
import { errorIssue, toDefinitionIssue, type RawIssue } from './rawIssue.js';
import { workflowDefinitionSchema } from './schema.js';
import type { WorkflowDefinition } from './types.js';
import { isRecord } from './values.js';
import { fromZodIssue } from './zodIssues.js';

/** Result of {@link checkDefinitionValue}. */
export interface CheckedDefinition {
  /** Present when no issue has severity `error`. */
  definition?: WorkflowDefinition;
  issues: RawIssue[];
  /** The value that was validated (foreign keys removed). */
  value: unknown;
}

/** Validate a raw definition value; never throws for problems in the value. */
export function checkDefinitionValue(input: unknown): CheckedDefinition {
  if (!isRecord(input)) {
    return {
      issues: [errorIssue('ROOT_NOT_MAPPING', [], 'a workflow definition must be a mapping')],
      value: input,
    };
  }
  const { value, warnings } = stripForeignKeys(input);
  const parsed = workflowDefinitionSchema.safeParse(value);
  const schemaIssues = parsed.success
    ? []
    : parsed.error.issues.flatMap((issue) => fromZodIssue(issue, value));
  const issues = [...warnings, ...schemaIssues, ...crossCheck(value)];
  const failed = issues.some((issue) => issue.severity === 'error');
  return parsed.success && !failed ? { definition: parsed.data, issues, value } : { issues, value };
}

/**
 * Validate a definition that arrives as a plain value (a JSON snapshot). Issues carry key
 * paths but no line numbers; `definition` is present only when there are no errors.
 */
export function parseDefinitionObject(value: unknown): {
  definition?: WorkflowDefinition;
  issues: DefinitionIssue[];
} {
  const checked = checkDefinitionValue(value);
  const issues = checked.issues.map((issue) => toDefinitionIssue(issue));
  return checked.definition === undefined ? { issues } : { definition: checked.definition, issues };
}
