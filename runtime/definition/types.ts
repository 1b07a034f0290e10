/**
 * The typed shape of a parsed workflow definition.
 *
 * These are the *normalized* types: defaults from the spec are filled in, route aliases
 * (`next_step`, `next`) are folded into `target`, a numeric `workflow_version` is a string and
 * keys borrowed from other engines are gone. The engine reads only this shape, so it never has
 * to re-apply a default or guess which alias a definition used. The zod schema in `schema.ts`
 * is checked against these declarations at compile time.
 */
import type {
  AiPostprocessing,
  AiPreprocessing,
  AiRuntime,
  FallbackBehavior,
  HttpMethod,
  LoopMode,
  MergeConflictBehavior,
  MergeStrategy,
} from './kinds.js';

import type { JsonObject } from '../model/json.js';

export type { JsonObject };

/** Fields every step has. */
export interface StepBase {
  /** Step name, unique across the whole definition (LOOP bodies included). */
  name: string;
  /** Names of sibling steps this step waits for. */
  dependencies?: string[];
}

/** Synchronous function step. */
export interface StandardStep extends StepBase {
  type: 'STANDARD';
  /** Function path, `pkg.module.export` or `./module.js#export`. */
  function: string;
  /** Function path of the saga compensation. */
  compensate_function?: string;
  automate_next?: boolean;
}

/** Queued task step (same fields as STANDARD). */
export interface AsyncStep extends StepBase {
  type: 'ASYNC';
  function: string;
  compensate_function?: string;
  automate_next?: boolean;
}

/** Conditional route of a DECISION step. */
export interface ConditionRoute {
  /** Expression (see the expression language). */
  condition: string;
  /** Step to jump to when the condition holds. */
  target: string;
}

/** Fallback route of a DECISION step. */
export interface DefaultRoute {
  /** Step to jump to when no condition matched. */
  default: string;
}

/** A DECISION route. */
export type Route = ConditionRoute | DefaultRoute;

/** Runs a function, then jumps by the first matching route (or by a jump directive). */
export interface DecisionStep extends StepBase {
  type: 'DECISION';
  function: string;
  /** Evaluated in order; absent when the function raises the jump itself. */
  routes?: Route[];
}

/** One task of a PARALLEL step. */
export interface ParallelTask {
  name: string;
  function_path: string;
}

/** Fan-out step: all tasks dispatched at once, results merged. */
export interface ParallelStep extends StepBase {
  type: 'PARALLEL';
  tasks: ParallelTask[];
  merge_strategy: MergeStrategy;
  merge_conflict_behavior: MergeConflictBehavior;
  allow_partial_success: boolean;
  timeout_seconds?: number;
}

/** Retry policy of an HTTP step. */
export interface HttpRetryPolicy {
  max_attempts: number;
  delay_seconds: number;
}

/** Request description of an HTTP step; text values are templates. */
export interface HttpConfig {
  method: HttpMethod;
  url: string;
  headers?: JsonObject;
  query_params?: JsonObject;
  body?: JsonObject;
  /** Seconds; default 30. */
  timeout: number;
  retry_policy: HttpRetryPolicy;
}

/** Outbound HTTP call; the response lands at `state[output_key]`. */
export interface HttpStep extends StepBase {
  type: 'HTTP';
  http_config: HttpConfig;
  output_key: string;
  /** Response fields to keep (e.g. `body`, `status_code`). */
  includes?: string[];
}

/** Iterative step over a body of steps. */
export interface LoopStep extends StepBase {
  type: 'LOOP';
  mode: LoopMode;
  /** Safety limit; required. */
  max_iterations: number;
  loop_body: StepDefinition[];
  /** ITERATE: dot path to a list in state. */
  iterate_over?: string;
  /** ITERATE: name the current item is exposed under. */
  item_var_name?: string;
  /** WHILE: expression; the loop continues while it is true. */
  while_condition?: string;
}

/** Spawns an independent workflow and does not wait for it. */
export interface FireAndForgetStep extends StepBase {
  type: 'FIRE_AND_FORGET';
  target_workflow_type: string;
  initial_data_template: JsonObject;
}

/** Registers a cron schedule that starts a workflow at each tick. */
export interface CronScheduleStep extends StepBase {
  type: 'CRON_SCHEDULE';
  /** Unique, templated. */
  schedule_name: string;
  cron_expression: string;
  target_workflow_type: string;
  initial_data_template: JsonObject;
}

/** Pauses for human input (the function raises a pause directive). */
export interface HumanInLoopStep extends StepBase {
  type: 'HUMAN_IN_LOOP';
  function: string;
  automate_next?: boolean;
  /** Deadline for the human input, from the pause (a durable timer); none when absent. */
  timeout_seconds?: number;
  /**
   * What the deadline does: `fail` (default) fails the step (saga rollback applies);
   * `resume` resumes the step as if the input `timeout_input` had been given.
   */
  on_timeout?: 'fail' | 'resume';
  /** The input a `resume` deadline resumes with (default `{}`); `human_input_timed_out: true` is added. */
  timeout_input?: JsonObject;
}

/**
 * Parameters of an AI_INFERENCE step's postprocessing. Unknown keys are dropped at load with
 * a warning (definitions written for other engines carry their own).
 */
export interface AiPostprocessingParams {
  /** Class names: by output index (softmax, argmax), or `[negative, positive]` (threshold). */
  labels?: string[];
  /** Model output to postprocess (default: the first). */
  output?: string;
  /** threshold: which element of the output vector is the score. */
  index?: number;
}

/** Model invocation settings of an AI_INFERENCE step. */
export interface AiConfig {
  model_name: string;
  runtime: AiRuntime;
  /** State path of the model input. */
  input_source: string;
  /** Default `inference_result`. */
  output_key: string;
  preprocessing?: AiPreprocessing;
  postprocessing?: AiPostprocessing;
  threshold?: number;
  /** Default 5000. */
  timeout_ms: number;
  /** Absent means `fail`. */
  fallback_on_error?: FallbackBehavior;
  /** Model file, relative to the steps root (which it may not leave). */
  model_path?: string;
  postprocessing_params?: AiPostprocessingParams;
  default_result?: JsonObject;
}

/** Runs a loaded model on a state value. */
export interface AiInferenceStep extends StepBase {
  type: 'AI_INFERENCE';
  ai_config: AiConfig;
  automate_next?: boolean;
}

/** Module settings of a WASM step. */
export interface WasmConfig {
  /** SHA-256 of the binary, 64 lowercase hex characters. */
  wasm_hash: string;
  /** Default `execute`. */
  entrypoint: string;
  /** Workflow state key → module input key; absent = whole state. */
  state_mapping?: Record<string, string>;
  /** 100..60000, default 5000. */
  timeout_ms: number;
  /** Default `fail`. */
  fallback_on_error: FallbackBehavior;
  default_result?: JsonObject;
}

/** Runs a sandboxed WebAssembly module. */
export interface WasmStep extends StepBase {
  type: 'WASM';
  wasm_config: WasmConfig;
  merge_strategy: MergeStrategy;
  merge_conflict_behavior: MergeConflictBehavior;
  automate_next?: boolean;
}

/** Any step, discriminated on `type`. */
export type StepDefinition =
  | StandardStep
  | AsyncStep
  | DecisionStep
  | ParallelStep
  | HttpStep
  | LoopStep
  | FireAndForgetStep
  | CronScheduleStep
  | HumanInLoopStep
  | AiInferenceStep
  | WasmStep;

/** A parsed, normalized workflow definition. */
export interface WorkflowDefinition {
  /** At most 200 characters (the `workflow_executions.workflow_type` column). */
  workflow_type: string;
  /** At most 50 characters; a YAML number is kept as its source text. */
  workflow_version?: string;
  description?: string;
  /** Initial workflow state defaults; `{}` when absent. */
  initial_state: JsonObject;
  /**
   * JSON Schema (the supported subset) of the data a workflow is started with: `start`
   * refuses data that does not match (INVALID_INPUT), and loading checks conditions' paths
   * and comparisons against it.
   */
  input_schema?: JsonObject;
  /** Accepted; saga is active whenever a step names `compensate_function`. */
  saga_mode?: boolean;
  /** Workflow-wide default of the per-step `automate_next`; default false. */
  automate_next: boolean;
  /** Record every completion on the edge as a SAF transaction; default false. */
  store_and_forward: boolean;
  steps: StepDefinition[];
}
