/**
 * Checks that look across fields and steps, run on the raw definition value.
 *
 * They run whether or not the schema accepted the definition, so one load reports schema
 * problems and reference/syntax problems together; each check reads only the fields that have
 * the right shape and leaves the rest to the schema's own messages.
 */
import { parseFunctionPath, StepFunctionError } from './functionPath.js';
import { collectFunctionRefs } from './functionRefs.js';
import { checkInputSchema } from './inputSchemaChecks.js';
import { isStepKind } from './kinds.js';
import { errorIssue, type RawIssue } from './rawIssue.js';
import { collectRawSteps } from './rawSteps.js';
import { checkReferences } from './references.js';
import { checkStepRules } from './stepRules.js';
import { checkStepSyntax } from './syntaxChecks.js';

/** Every cross-field problem of a raw definition value (foreign keys already removed). */
export function crossCheck(definition: unknown): RawIssue[] {
  const tree = collectRawSteps(definition);
  const issues = checkReferences(tree);
  for (const step of tree.steps) {
    if (!isStepKind(step.type)) continue;
    issues.push(...checkStepRules(step, step.type), ...checkStepSyntax(step, step.type));
  }
  for (const ref of collectFunctionRefs(tree)) {
    try {
      parseFunctionPath(ref.functionPath);
    } catch (error) {
      if (!(error instanceof StepFunctionError)) throw error;
      issues.push(errorIssue('FUNCTION_PATH_INVALID', ref.path, error.message));
    }
  }
  issues.push(...checkInputSchema(definition, tree));
  return issues;
}
