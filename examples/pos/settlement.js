// Step functions of store_settlement.yaml (cloud side).
import { setTimeout as sleep } from 'node:timers/promises';

/** Parks the workflow in WAITING_HUMAN_INPUT until a manager resumes it. */
export class WorkflowPauseDirective extends Error {
  name = 'WorkflowPauseDirective';
  constructor(result) {
    super('waiting for the store manager');
    this.result = result;
  }
}

/** Add up the shift's payments: `{store, payments: [{amount_minor}], currency}`. */
export function total_up(state) {
  const payments = Array.isArray(state.payments) ? state.payments : [];
  const total = payments.reduce(
    (sum, p) => sum + (Number.isInteger(p.amount_minor) ? p.amount_minor : 0),
    0,
  );
  return { total_minor: total, payment_count: payments.length };
}

/** The routes decide; note the verdict for the report. */
export function check_total(state) {
  return { needs_review: state.total_minor > state.review_threshold_minor };
}

/** A manager confirms a large shift: resume with `{approved: true, by: NAME}`. */
export function manager_review(state, context) {
  const input = context.input ?? {};
  if (input.approved === true) return { review: { approved: true, by: input.by ?? null } };
  if (input.approved === false)
    throw new Error(`settlement of ${state.store} refused by the manager`);
  throw new WorkflowPauseDirective({
    prompt: 'confirm the shift total',
    total_minor: state.total_minor,
  });
}

/** Send the settlement to the acquirer (a worker runs this as a queued task). */
export async function settle(state) {
  // the acquirer's settlement host takes a moment to acknowledge a file
  await sleep(1500 + Math.floor(Math.random() * 1500));
  return {
    settlement: {
      reference: `STL-${state.store}-${Date.now().toString(36).toUpperCase()}`,
      amount_minor: state.total_minor,
      currency: state.currency ?? 'EUR',
    },
  };
}

export function report(state) {
  return {
    report: `${state.store}: ${state.payment_count} payments, ${(state.total_minor / 100).toFixed(2)} ${state.currency ?? 'EUR'} settled as ${state.settlement.reference}`,
  };
}
