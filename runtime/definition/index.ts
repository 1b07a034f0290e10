/**
 * Workflow definitions: YAML → zod → typed {@link WorkflowDefinition}.
 *
 * This is the only door through which a definition enters the engine. Everything behind it
 * (actors, executors, edge sync) may assume a definition whose step kinds, targets,
 * dependencies, expressions, templates, cron expressions and function paths have been checked,
 * and whose defaults are filled in.
 */
export { DEFAULT_AI_RUNTIMES } from './aiRuntimes.js';
export { parseDefinitionObject } from './check.js';
export {
  DEFINITION_ISSUE_CODES,
  DefinitionError,
  formatDefinitionIssues,
  type DefinitionIssue,
  type DefinitionIssueCode,
  type DefinitionIssueSeverity,
} from './errors.js';
export {
  parseFunctionPath,
  resolveStepFunction,
  STEP_MODULE_EXTENSIONS,
  StepFunctionError,
  type FunctionPath,
  type ResolvedStepFunction,
  type StepFunctionErrorCode,
} from './functionPath.js';
export { canonicalJson, definitionHash } from './hash.js';
export {
  AI_POSTPROCESSING,
  AI_PREPROCESSING,
  AI_RUNTIMES,
  COMPENSATABLE_STEP_KINDS,
  FALLBACK_BEHAVIORS,
  FOREIGN_KEYS,
  HTTP_METHODS,
  isStepKind,
  LOOP_MODES,
  MERGE_CONFLICT_BEHAVIORS,
  MERGE_STRATEGIES,
  ROUTE_TARGET_ALIASES,
  STEP_KINDS,
  type AiPostprocessing,
  type AiPreprocessing,
  type AiRuntime,
  type FallbackBehavior,
  type ForeignKey,
  type HttpMethod,
  type LoopMode,
  type MergeConflictBehavior,
  type MergeStrategy,
  type StepKind,
} from './kinds.js';
export { listSteps, type ListedStep } from './listSteps.js';
export {
  loadDefinition,
  loadDefinitionFile,
  type LoadDefinitionOptions,
  type LoadedDefinition,
} from './load.js';
export type * from './types.js';
