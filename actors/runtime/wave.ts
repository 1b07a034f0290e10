/**
 * Concurrent steps from `dependencies` (spec: "steps that depend on the same step may run in
 * parallel"). Steps run in declaration order; a step that lists `dependencies` is ordered
 * only after the steps it names. So, from the step a workflow is at, the following steps
 * whose dependencies all lie before that step can run at the same time as it — a wave.
 *
 * Only steps that compute a new state from the current one join a wave (STANDARD, HTTP);
 * every step but the last must continue on its own (`automate_next`). The steps of a wave
 * run concurrently on the same state; their results are applied and committed one by one in
 * declaration order, exactly as if they had run in sequence, and the first step that does
 * not simply complete (fails, jumps, pauses, retries) ends the wave: the results of the
 * steps after it are dropped and those steps run again when the workflow reaches them
 * (step execution is at-least-once, each with its idempotency key).
 */
import type { JsonObject, StepDefinition } from '../../runtime/index.js';

const WAVE_KINDS = new Set<StepDefinition['type']>(['STANDARD', 'HTTP']);

/** The steps that can run together starting at top-level step `index` (at least that one). */
export function concurrentWave(
  steps: readonly StepDefinition[],
  index: number,
  automateNext: (step: StepDefinition) => boolean,
): StepDefinition[] {
  const first = steps[index];
  if (!first || !WAVE_KINDS.has(first.type)) return first ? [first] : [];
  const before = new Set(steps.slice(0, index).map((s) => s.name));
  const wave = [first];
  for (const step of steps.slice(index + 1)) {
    const previous = wave.at(-1)!;
    if (!automateNext(previous)) break;
    const dependencies = step.dependencies;
    if (!WAVE_KINDS.has(step.type) || !dependencies?.length) break;
    if (!dependencies.every((d) => before.has(d))) break;
    wave.push(step);
  }
  return wave;
}

/** `base` with what a step changed between `before` and `after` (top-level keys set or removed). */
export function applyChanges(base: JsonObject, before: JsonObject, after: JsonObject): JsonObject {
  const result: JsonObject = { ...base };
  for (const [key, value] of Object.entries(after))
    if (JSON.stringify(before[key]) !== JSON.stringify(value)) result[key] = value;
  for (const key of Object.keys(before)) if (!(key in after)) delete result[key];
  return result;
}
