/**
 * Zod schemas of the workflow definition language.
 *
 * Every object is a strict object: a misspelt key (`fucntion`) must fail the load rather than
 * silently disable the field it meant to set. Defaults from the spec are applied here, so the
 * parsed value already is the normalized {@link WorkflowDefinition}. Rules that need more than
 * one field (LOOP mode requirements, name uniqueness, targets, cycles) live in `crossCheck.ts`,
 * because zod skips an object's refinements as soon as one of its fields fails, and a
 * definition author wants to see every problem in one pass.
 */
import { z } from 'zod';
import {
  AI_POSTPROCESSING,
  AI_PREPROCESSING,
  AI_RUNTIMES,
  FALLBACK_BEHAVIORS,
  HTTP_METHODS,
  LOOP_MODES,
  MERGE_CONFLICT_BEHAVIORS,
  MERGE_STRATEGIES,
} from './kinds.js';
import { varcharLength } from '../schema/varcharLength.js';
import type * as T from './types.js';

/** Issue codes attached to custom zod issues through `params.code`. */
export const CUSTOM_ISSUE_PARAM = 'code';

const nonEmpty = z.string().min(1);
// function paths are stored with their tasks and compensations (sized columns)
const functionPath = z.string().min(1).max(varcharLength('tasks', 'function_path'));
const jsonObject = z.record(z.string(), z.unknown());
const positiveInt = z.number().int().min(1);

const stepBase = {
  name: z.string().min(1).max(200),
  dependencies: z.array(nonEmpty).optional(),
};

const standardStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('STANDARD'),
  function: functionPath,
  compensate_function: functionPath.optional(),
  automate_next: z.boolean().optional(),
});

const asyncStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('ASYNC'),
  function: functionPath,
  compensate_function: functionPath.optional(),
  automate_next: z.boolean().optional(),
});

/**
 * A route as written: `{condition, target}` or `{default}`, with `next_step` / `next` accepted
 * for `target`. The transform folds the aliases into `target`.
 */
const routeSchema = z
  .strictObject({
    condition: z.string().optional(),
    target: nonEmpty.optional(),
    next_step: nonEmpty.optional(),
    next: nonEmpty.optional(),
    default: nonEmpty.optional(),
  })
  .transform((route, ctx): T.Route => {
    const targets = (['target', 'next_step', 'next'] as const).filter(
      (key) => route[key] !== undefined,
    );
    if (route.default !== undefined) {
      const extra = [...(route.condition === undefined ? [] : ['condition']), ...targets];
      if (extra.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: [extra[0] ?? 'default'],
          message: `a default route takes only 'default', not ${extra.map((k) => `'${k}'`).join(', ')}`,
          params: { [CUSTOM_ISSUE_PARAM]: 'INVALID_ROUTE' },
        });
        return z.NEVER;
      }
      return { default: route.default };
    }
    if (route.condition === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['condition'],
        message:
          targets.length === 0
            ? "a route needs 'condition' and 'target', or 'default'"
            : "missing required field 'condition' (or write the route as {default: step})",
        params: { [CUSTOM_ISSUE_PARAM]: 'MISSING_FIELD' },
      });
      return z.NEVER;
    }
    const [first, second] = targets;
    if (first === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['target'],
        message: "missing required field 'target' (aliases: 'next_step', 'next')",
        params: { [CUSTOM_ISSUE_PARAM]: 'MISSING_FIELD' },
      });
      return z.NEVER;
    }
    if (second !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [second],
        message: `'${first}' and '${second}' both name the target; keep one`,
        params: { [CUSTOM_ISSUE_PARAM]: 'CONFLICTING_KEYS' },
      });
      return z.NEVER;
    }
    return { condition: route.condition, target: route[first] ?? '' };
  });

const decisionStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('DECISION'),
  function: functionPath,
  routes: z.array(routeSchema).optional(),
});

const parallelStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('PARALLEL'),
  tasks: z
    .array(
      z.strictObject({
        // a task is a row of `tasks`: its name is a sized column there
        name: nonEmpty.max(varcharLength('tasks', 'step_name')),
        function_path: functionPath,
      }),
    )
    .min(1),
  merge_strategy: z.enum(MERGE_STRATEGIES).default('SHALLOW'),
  merge_conflict_behavior: z.enum(MERGE_CONFLICT_BEHAVIORS).default('PREFER_NEW'),
  allow_partial_success: z.boolean().default(false),
  timeout_seconds: positiveInt.optional(),
});

const httpStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('HTTP'),
  http_config: z.strictObject({
    method: z.enum(HTTP_METHODS),
    url: nonEmpty,
    headers: jsonObject.optional(),
    query_params: jsonObject.optional(),
    body: jsonObject.optional(),
    timeout: positiveInt.default(30),
    retry_policy: z
      .strictObject({
        max_attempts: positiveInt.default(1),
        delay_seconds: z.number().int().min(0).default(5),
      })
      .default(() => ({ max_attempts: 1, delay_seconds: 5 })),
  }),
  output_key: nonEmpty,
  includes: z.array(z.string()).optional(),
});

const loopStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('LOOP'),
  mode: z.enum(LOOP_MODES),
  max_iterations: positiveInt,
  loop_body: z.array(z.lazy(() => stepSchema)).min(1),
  iterate_over: nonEmpty.optional(),
  item_var_name: nonEmpty.optional(),
  while_condition: nonEmpty.optional(),
});

const fireAndForgetStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('FIRE_AND_FORGET'),
  target_workflow_type: z.string().min(1).max(200),
  initial_data_template: jsonObject,
});

const cronScheduleStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('CRON_SCHEDULE'),
  schedule_name: nonEmpty.max(varcharLength('scheduled_workflows', 'schedule_name')),
  cron_expression: nonEmpty.max(varcharLength('scheduled_workflows', 'cron_expression')),
  target_workflow_type: z.string().min(1).max(200),
  initial_data_template: jsonObject,
});

const humanInLoopStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('HUMAN_IN_LOOP'),
  function: functionPath,
  automate_next: z.boolean().optional(),
  timeout_seconds: positiveInt.optional(),
  on_timeout: z.enum(['fail', 'resume']).optional(),
  timeout_input: jsonObject.optional(),
});

const aiInferenceStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('AI_INFERENCE'),
  ai_config: z.strictObject({
    model_name: nonEmpty,
    runtime: z.enum(AI_RUNTIMES),
    input_source: nonEmpty,
    output_key: nonEmpty.default('inference_result'),
    preprocessing: z.enum(AI_PREPROCESSING).optional(),
    postprocessing: z.enum(AI_POSTPROCESSING).optional(),
    threshold: z.number().optional(),
    timeout_ms: positiveInt.default(5000),
    fallback_on_error: z.enum(FALLBACK_BEHAVIORS).optional(),
    model_path: nonEmpty.optional(),
    // not strict: unknown keys are warned about (stepRules) and dropped
    postprocessing_params: z
      .object({
        labels: z.array(nonEmpty).min(1).optional(),
        output: nonEmpty.optional(),
        index: z.number().int().min(0).optional(),
      })
      .optional(),
    default_result: jsonObject.optional(),
  }),
  automate_next: z.boolean().optional(),
});

const wasmStepSchema = z.strictObject({
  ...stepBase,
  type: z.literal('WASM'),
  wasm_config: z.strictObject({
    // hex digests are compared as lower case everywhere; an upper-case one names the same module
    wasm_hash: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'wasm_hash must be a SHA-256 digest: 64 hex characters')
      .transform((hash) => hash.toLowerCase()),
    entrypoint: nonEmpty.default('execute'),
    state_mapping: z.record(z.string(), z.string()).optional(),
    timeout_ms: z.number().int().min(100).max(60_000).default(5000),
    fallback_on_error: z.enum(FALLBACK_BEHAVIORS).default('fail'),
    default_result: jsonObject.optional(),
  }),
  merge_strategy: z.enum(MERGE_STRATEGIES).default('SHALLOW'),
  merge_conflict_behavior: z.enum(MERGE_CONFLICT_BEHAVIORS).default('PREFER_NEW'),
  automate_next: z.boolean().optional(),
});

/** Schema of one step: a discriminated union of the 11 kinds on `type`. */
export const stepSchema: z.ZodType<T.StepDefinition> = z.discriminatedUnion('type', [
  standardStepSchema,
  asyncStepSchema,
  decisionStepSchema,
  parallelStepSchema,
  httpStepSchema,
  loopStepSchema,
  fireAndForgetStepSchema,
  cronScheduleStepSchema,
  humanInLoopStepSchema,
  aiInferenceStepSchema,
  wasmStepSchema,
]);

/** Schema of a whole definition (foreign keys already removed). */
export const workflowDefinitionSchema = z.strictObject({
  workflow_type: z.string().min(1).max(200),
  workflow_version: z
    .preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().min(1).max(50))
    .optional(),
  description: z.string().optional(),
  initial_state: jsonObject.default(() => ({})),
  input_schema: jsonObject.optional(),
  saga_mode: z.boolean().optional(),
  automate_next: z.boolean().default(false),
  store_and_forward: z.boolean().default(false),
  steps: z.array(stepSchema).min(1),
});

// Compile-time proof that the schemas produce exactly the declared types.
type Equals<A, B> =
  (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
type Assert<_ extends true> = never;
type _SchemaMatchesTypes = [
  Assert<Equals<z.output<typeof standardStepSchema>, T.StandardStep>>,
  Assert<Equals<z.output<typeof asyncStepSchema>, T.AsyncStep>>,
  Assert<Equals<z.output<typeof decisionStepSchema>, T.DecisionStep>>,
  Assert<Equals<z.output<typeof parallelStepSchema>, T.ParallelStep>>,
  Assert<Equals<z.output<typeof httpStepSchema>, T.HttpStep>>,
  Assert<Equals<z.output<typeof loopStepSchema>, T.LoopStep>>,
  Assert<Equals<z.output<typeof fireAndForgetStepSchema>, T.FireAndForgetStep>>,
  Assert<Equals<z.output<typeof cronScheduleStepSchema>, T.CronScheduleStep>>,
  Assert<Equals<z.output<typeof humanInLoopStepSchema>, T.HumanInLoopStep>>,
  Assert<Equals<z.output<typeof aiInferenceStepSchema>, T.AiInferenceStep>>,
  Assert<Equals<z.output<typeof wasmStepSchema>, T.WasmStep>>,
  Assert<Equals<z.output<typeof workflowDefinitionSchema>, T.WorkflowDefinition>>,
];
