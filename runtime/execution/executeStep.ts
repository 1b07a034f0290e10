/**
 * The step dispatcher: one exhaustive switch over the 11 kinds. Kinds whose execution
 * provider is not part of this process (AI_INFERENCE, WASM without their providers) fail with STEP_KIND_UNAVAILABLE rather than running somewhere they should not.
 */
import type { StepDefinition } from '../definition/index.js';
import type { StepEffects, StepOutcome } from './outcome.js';
import type { StepResult, StepRun } from './run.js';
import { executeAiInference } from './steps/aiInference.js';
import { executeCronSchedule } from './steps/cronSchedule.js';
import { executeDecision } from './steps/decision.js';
import { executeFireAndForget } from './steps/fireAndForget.js';
import { executeFunctionStep } from './steps/functionStep.js';
import { executeHttp } from './steps/http.js';
import { executeLoop } from './steps/loop.js';
import { executeAsync, executeParallel } from './steps/tasks.js';
import { executeWasm } from './steps/wasm.js';

/** Execute `step` once and return its result (no timing, no effects attached). */
export async function dispatchStep(step: StepDefinition, run: StepRun): Promise<StepResult> {
  switch (step.type) {
    case 'STANDARD':
    case 'HUMAN_IN_LOOP':
      return executeFunctionStep(step, run);
    case 'DECISION':
      return executeDecision(step, run);
    case 'LOOP':
      return executeLoop(step, run, dispatchStep);
    case 'HTTP':
      return executeHttp(step, run);
    case 'FIRE_AND_FORGET':
      return executeFireAndForget(step, run);
    case 'CRON_SCHEDULE':
      return executeCronSchedule(step, run);
    case 'ASYNC':
      return executeAsync(step, run);
    case 'PARALLEL':
      return executeParallel(step, run);
    case 'AI_INFERENCE':
      return executeAiInference(step, run);
    case 'WASM':
      return executeWasm(step, run);
    default: {
      const never: never = step;
      throw new Error(`unknown step kind ${JSON.stringify(never)}`);
    }
  }
}

/** Execute `step` once, timing it and attaching the effects it collected. */
export async function executeStep(step: StepDefinition, run: StepRun): Promise<StepOutcome> {
  const started = performance.now();
  const result = await dispatchStep(step, run);
  const effects: StepEffects = run.effects;
  return { ...result, effects, durationMs: performance.now() - started };
}
