/**
 * The cloud workflow the chaos run starts through the API so the `saffron worker` processes
 * have work while they are killed: a settlement check with its scoring step queued as an
 * ASYNC task. The gateways (started with `--no-worker`) run the first step and dispatch the
 * task; only a worker can finish the workflow. The YAML and its step module are written to
 * the run's folder, which is both the gateways' and the workers' steps root.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The workflow type. */
export const CLOUD_FLOW_TYPE = 'chaos_settlement';

/** Audit rows every COMPLETED run of the flow has exactly once, by event type. */
export const CLOUD_FLOW_EXPECTED_AUDIT = {
  WORKFLOW_STARTED: 1,
  WORKFLOW_COMPLETED: 1,
  TASK_DISPATCHED: 1,
  TASK_COMPLETED: 1,
} as const;

/** Steps of the flow, in order: each must have exactly one STEP_EXECUTED row when COMPLETED. */
export const CLOUD_FLOW_STEPS = ['validate', 'score', 'settle'] as const;

const YAML = `workflow_type: ${CLOUD_FLOW_TYPE}
workflow_version: '1'
description: chaos run — a settlement check whose scoring runs on a worker
automate_next: true
steps:
  - { name: validate, type: STANDARD, function: chaos_steps.validate }
  - { name: score, type: ASYNC, function: chaos_steps.score }
  - { name: settle, type: STANDARD, function: chaos_steps.settle }
`;

const STEPS = `// steps of the chaos run's cloud workflow (test/chaos/cloudFlow.ts)
export const validate = (state) => ({ valid: Number(state.amount_minor) > 0 });
export const score = async (state) => {
  // long enough that a worker killed at random is sometimes holding a task
  await new Promise((resolve) => setTimeout(resolve, 50 + (Number(state.amount_minor) % 200)));
  return { score: (Number(state.amount_minor) * 31) % 1000 };
};
export const settle = (state) => ({ settled: state.valid === true, batch: state.batch });
`;

/** Write the flow under `dir`: `dir/workflows/*.yaml` and `dir/steps/chaos_steps.js`. */
export function writeCloudFlow(dir: string): { stepsDir: string; workflowsDir: string } {
  const stepsDir = join(dir, 'steps');
  const workflowsDir = join(dir, 'workflows');
  mkdirSync(stepsDir, { recursive: true });
  mkdirSync(workflowsDir, { recursive: true });
  writeFileSync(join(stepsDir, 'chaos_steps.js'), STEPS);
  writeFileSync(join(workflowsDir, `${CLOUD_FLOW_TYPE}.yaml`), YAML);
  return { stepsDir, workflowsDir };
}
