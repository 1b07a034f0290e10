/**
 * Closed sets of the workflow definition language.
 *
 * Each set is an `as const` array with a derived union type and a runtime guard, so the zod
 * schema, the exhaustive `switch` statements and the did-you-mean suggestions all read the
 * same list. A value added in one place and forgotten in another would otherwise load a
 * definition that the engine cannot run (or reject one it can).
 */

/** The 11 step kinds, the values of a step's `type`. */
export const STEP_KINDS = [
  'STANDARD',
  'ASYNC',
  'DECISION',
  'PARALLEL',
  'HTTP',
  'LOOP',
  'FIRE_AND_FORGET',
  'CRON_SCHEDULE',
  'HUMAN_IN_LOOP',
  'AI_INFERENCE',
  'WASM',
] as const;
/** One of {@link STEP_KINDS}. */
export type StepKind = (typeof STEP_KINDS)[number];

/** True when `value` names one of the 11 step kinds. */
export function isStepKind(value: unknown): value is StepKind {
  return typeof value === 'string' && (STEP_KINDS as readonly string[]).includes(value);
}

/** Step kinds that may name a `compensate_function` (spec: "Supports compensation"). */
export const COMPENSATABLE_STEP_KINDS = [
  'STANDARD',
  'ASYNC',
] as const satisfies readonly StepKind[];

/** How a step's result is merged into workflow state. */
export const MERGE_STRATEGIES = ['SHALLOW', 'DEEP'] as const;
/** One of {@link MERGE_STRATEGIES}. */
export type MergeStrategy = (typeof MERGE_STRATEGIES)[number];

/** What a merge does when a key is present on both sides with different values. */
export const MERGE_CONFLICT_BEHAVIORS = ['PREFER_NEW', 'PREFER_EXISTING', 'RAISE_ERROR'] as const;
/** One of {@link MERGE_CONFLICT_BEHAVIORS}. */
export type MergeConflictBehavior = (typeof MERGE_CONFLICT_BEHAVIORS)[number];

/** Methods an HTTP step may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
/** One of {@link HTTP_METHODS}. */
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** LOOP step modes. */
export const LOOP_MODES = ['ITERATE', 'WHILE'] as const;
/** One of {@link LOOP_MODES}. */
export type LoopMode = (typeof LOOP_MODES)[number];

/** Inference runtimes an AI_INFERENCE step may name. */
export const AI_RUNTIMES = ['tflite', 'onnx', 'custom'] as const;
/** One of {@link AI_RUNTIMES}. */
export type AiRuntime = (typeof AI_RUNTIMES)[number];

/** AI_INFERENCE input preprocessing. */
export const AI_PREPROCESSING = ['normalize', 'resize', 'none'] as const;
/** One of {@link AI_PREPROCESSING}. */
export type AiPreprocessing = (typeof AI_PREPROCESSING)[number];

/** AI_INFERENCE output postprocessing. */
export const AI_POSTPROCESSING = ['softmax', 'threshold', 'argmax', 'none'] as const;
/** One of {@link AI_POSTPROCESSING}. */
export type AiPostprocessing = (typeof AI_POSTPROCESSING)[number];

/** What AI_INFERENCE and WASM steps do when execution fails. */
export const FALLBACK_BEHAVIORS = ['fail', 'skip', 'default'] as const;
/** One of {@link FALLBACK_BEHAVIORS}. */
export type FallbackBehavior = (typeof FALLBACK_BEHAVIORS)[number];

/**
 * Keys that definitions written for other engines carry and Saffron has no use for. They are
 * accepted (with a warning) at the top level and on steps, and dropped from the parsed
 * definition, so such definitions load unchanged.
 */
export const FOREIGN_KEYS = [
  'description',
  'initial_state_model',
  'initial_state_model_path',
  'input_model',
  'required_input',
] as const;
/** One of {@link FOREIGN_KEYS}. */
export type ForeignKey = (typeof FOREIGN_KEYS)[number];

/** Aliases accepted for a route's `target` (normalized to `target`). */
export const ROUTE_TARGET_ALIASES = ['next_step', 'next'] as const;
