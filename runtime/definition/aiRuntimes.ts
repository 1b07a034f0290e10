/**
 * Which AI_INFERENCE `runtime`s a loader accepts. This depends on who loads the definition,
 * not on the definition: a runtime with a TensorFlow Lite provider can run `runtime: tflite`,
 * one without cannot. Node has no maintained TFLite runtime, so by default only `onnx` and
 * `custom` load, and a `tflite` step fails at load with its line number instead of failing
 * every workflow that reaches it. A runtime created with a tflite provider passes its
 * providers' kinds to the loader (`createWorkflowRegistry({ aiRuntimes })`, done by
 * `createRuntime`). Definitions restored from snapshots are not re-checked: a workflow
 * already running keeps its definition, and a missing provider then fails the step (through
 * its `fallback_on_error`).
 */
import { AI_RUNTIMES, type AiRuntime } from './kinds.js';
import { errorIssue, type RawIssue } from './rawIssue.js';
import { collectRawSteps } from './rawSteps.js';
import { isRecord } from './values.js';

/** The runtimes a loader accepts when not told otherwise: those with a built-in provider. */
export const DEFAULT_AI_RUNTIMES: readonly AiRuntime[] = ['onnx', 'custom'];

function reason(runtime: string, available: readonly AiRuntime[]): string {
  const hint =
    runtime === 'tflite'
      ? 'Node has no maintained TensorFlow Lite runtime: convert the model to ONNX and use runtime: onnx, or load with a runtime that has a tflite provider (createRuntime({ inference: { providers: { tflite } } }))'
      : `register a provider for it (createRuntime({ inference: { providers: { ${runtime} } } }))`;
  return `runtime '${runtime}' is not available here (available: ${available.join(', ') || 'none'}); ${hint}`;
}

/** An error for every AI_INFERENCE step whose `runtime` is not in `available`. */
export function checkAiRuntimes(definition: unknown, available: readonly AiRuntime[]): RawIssue[] {
  return collectRawSteps(definition).steps.flatMap((step) => {
    const config = step.record.ai_config;
    if (step.type !== 'AI_INFERENCE' || !isRecord(config)) return [];
    const runtime = config.runtime;
    if (typeof runtime !== 'string' || !(AI_RUNTIMES as readonly string[]).includes(runtime)) {
      return []; // the schema reports it
    }
    if (available.includes(runtime as AiRuntime)) return [];
    return [
      errorIssue(
        'AI_RUNTIME_UNAVAILABLE',
        [...step.path, 'ai_config', 'runtime'],
        reason(runtime, available),
      ),
    ];
  });
}
