/**
 * The workflow both systems run in the end-to-end benchmark: five steps, the third of them a
 * unit of work queued for separate worker processes — a card payment's shape (validate,
 * enrich, score remotely, decide, record). The step bodies are trivial and shared: one
 * JavaScript module, written under a temporary steps root, that Saffron's workers load by
 * function path and DBOS's processes import, so the difference in the figures is the
 * engines' machinery, not the work.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Saffron's workflow type (and the DBOS workflow's registered name). */
export const FLOW_TYPE = 'bench_system';

/** The Saffron definition: four STANDARD steps and one ASYNC step run by `saffron worker`. */
export const FLOW_YAML = `workflow_type: ${FLOW_TYPE}
automate_next: true
steps:
  - { name: validate, type: STANDARD, function: bench_steps.validate }
  - { name: enrich, type: STANDARD, function: bench_steps.enrich }
  - { name: score, type: ASYNC, function: bench_steps.score }
  - { name: decide, type: STANDARD, function: bench_steps.decide }
  - { name: record, type: STANDARD, function: bench_steps.record }
`;

const STEPS_FILE = 'bench_steps.js';
const STEPS_SOURCE = `// steps of the system benchmark's workflow (bench/system/flow.ts)
export const validate = (state) => ({ valid: state.amount_minor > 0 });
export const enrich = (state) => ({ merchant_category: '5411', risk_region: state.amount_minor % 7 });
export const score = (state) => ({ score: (state.amount_minor * 31) % 1000 });
export const decide = (state) => ({ approved: state.score < 900 });
export const record = (state) => ({ approval_code: state.approved ? 'A' + state.amount_minor : null });
`;

/** The step bodies, as both systems call them. */
export interface StepBodies {
  validate(state: FlowState): FlowState;
  enrich(state: FlowState): FlowState;
  score(state: FlowState): FlowState;
  decide(state: FlowState): FlowState;
  record(state: FlowState): FlowState;
}

/** A workflow's state: the input plus what the steps return. */
export type FlowState = Record<string, unknown> & { amount_minor: number };

/** The input of workflow number `i`. */
export const flowInput = (i: number): FlowState => ({
  amount_minor: 1000 + (i % 5000),
  currency: 'EUR',
  card: { token: `tok_${i.toString(36)}`, last4: '4242' },
});

/** Write the step module under `dir` (Saffron's steps root). */
export function writeSteps(dir: string): void {
  writeFileSync(join(dir, STEPS_FILE), STEPS_SOURCE);
}

/** Import the step module written under `dir` (what DBOS's processes call). */
export async function importSteps(dir: string): Promise<StepBodies> {
  return (await import(pathToFileURL(join(dir, STEPS_FILE)).href)) as StepBodies;
}
