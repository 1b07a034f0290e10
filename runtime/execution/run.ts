/** Everything a step kind needs to execute one step. */
import type { WorkflowDefinition } from '../definition/index.js';
import type { SaffronError } from '../errors.js';
import type { ModelRegistry } from '../inference/index.js';
import type { JsonObject } from '../model/json.js';
import type { DestinationPolicy } from '../http/index.js';
import type { SecretProvider } from '../template/index.js';
import type { WasmRunner } from '../wasm/runner.js';
import type { StepContext } from './context.js';
import type { Clock, Ids } from './deps.js';
import type { StepExecutor } from './executor.js';
import type { ChildWorkflowSpec, StepEffects, TaskSpec } from './outcome.js';

/** The inputs of one step execution. */
export interface StepRun {
  definition: WorkflowDefinition;
  state: JsonObject;
  context: StepContext;
  effects: StepEffects;
  executor: StepExecutor;
  clock: Clock;
  ids: Ids;
  secrets: SecretProvider;
  /** Which addresses HTTP steps may connect to (default: public addresses only). */
  destinations?: DestinationPolicy;
  /** Attempts already made at this step visit (HTTP retries), 0 for the first. */
  attempt: number;
  /** Whether `type` names a workflow the engine can start. */
  knowsWorkflowType(type: string): boolean;
  /** Models for AI_INFERENCE steps; without it they fail with STEP_KIND_UNAVAILABLE. */
  inference?: ModelRegistry;
  /** Sandbox of WASM steps; without it they fail with STEP_KIND_UNAVAILABLE. */
  wasm?: WasmRunner;
}

/** A step outcome before timing and effects are attached. */
export type StepResult =
  | { kind: 'completed'; state: JsonObject }
  /** `missingPaths`: paths a DECISION's conditions read that were not there. */
  | { kind: 'jumped'; target: string; state: JsonObject; missingPaths?: string[] }
  /** `byDefault`: a HUMAN_IN_LOOP step that returned on its first run, waiting anyway. */
  | { kind: 'paused'; state: JsonObject; byDefault?: true }
  | { kind: 'subWorkflow'; state: JsonObject; child: ChildWorkflowSpec }
  | { kind: 'retry'; state: JsonObject; dueAt: Date; attempt: number; error: SaffronError }
  | { kind: 'dispatch'; state: JsonObject; tasks: TaskSpec[]; timeoutAt?: Date }
  | { kind: 'failed'; error: SaffronError };
