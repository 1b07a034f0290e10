// Step functions of pos_payment.yaml. Card data arrives tokenized: the state keeps the
// token and the last four digits, never a card number (the agent refuses one in clear).

/** Moves the workflow to another step (recognised by name, like the engine's own class). */
export class WorkflowJumpDirective extends Error {
  name = 'WorkflowJumpDirective';
  constructor(target) {
    super(`jump to ${target}`);
    this.targetStepName = target;
  }
}

/** Parks the workflow in WAITING_HUMAN_INPUT until the POS resumes it. */
export class WorkflowPauseDirective extends Error {
  name = 'WorkflowPauseDirective';
  constructor(result) {
    super('waiting for the cashier');
    this.result = result;
  }
}

/** Reject malformed payments before anything else happens. */
export function validate_card(state) {
  const { amount_minor, card } = state;
  if (!Number.isInteger(amount_minor) || amount_minor <= 0)
    throw new Error('amount_minor must be a positive integer');
  if (!card || typeof card.token !== 'string' || !/^\d{4}$/.test(String(card.last4 ?? '')))
    throw new Error('card must carry a token and its last four digits');
  return { card: { token: card.token, last4: card.last4 } };
}

/** Keep the fraud outcome in the receipt's terms; the routes decide. */
export function screen(state) {
  return { fraud: { score: state.fraud_score ?? null, decision: state.fraud_decision } };
}

/** The cashier checks the cardholder's ID: `{approved: true}` continues, false declines. */
export function cashier_review(state, context) {
  const answer = context.input?.approved;
  if (answer === true) return { review: { approved: true } };
  if (answer === false) {
    state.review = { approved: false };
    state.decision = { status: 'DECLINED', mode: 'REVIEW', reason: 'CASHIER_DECLINED' };
    throw new WorkflowJumpDirective('receipt');
  }
  throw new WorkflowPauseDirective({
    prompt: 'check the cardholder’s ID, then resume with {"approved": true|false}',
    fraud_score: state.fraud_score ?? null,
  });
}

/** Which way the payment goes is in the routes; note it for the receipt. */
export function choose_path(state) {
  return {
    path: state.edge?.online
      ? 'online'
      : state.amount_minor <= state.floor_limit_minor
        ? 'offline'
        : 'over_floor',
  };
}

export function approve_offline(state) {
  state.decision = { status: 'APPROVED', mode: 'OFFLINE', reason: 'UNDER_FLOOR_LIMIT' };
  throw new WorkflowJumpDirective('receipt');
}

export function decline_over_floor(state) {
  state.decision = { status: 'DECLINED', mode: 'OFFLINE', reason: 'OVER_FLOOR_LIMIT' };
  throw new WorkflowJumpDirective('receipt');
}

export function decline_fraud(state) {
  state.decision = { status: 'DECLINED', mode: 'FRAUD_RULES', reason: 'FRAUD_SCORE' };
  throw new WorkflowJumpDirective('receipt');
}

/** Read the acquirer's answer. */
export function record_authorization(state) {
  const body = state.acquirer?.body ?? {};
  if (state.acquirer?.status_code === 200 && body.approved === true)
    return {
      decision: { status: 'APPROVED', mode: 'ONLINE', authorization_id: body.authorization_id },
    };
  return {
    decision: {
      status: 'DECLINED',
      mode: 'ONLINE',
      reason: body.reason ?? `HTTP_${state.acquirer?.status_code}`,
    },
  };
}

export function receipt(state) {
  return {
    receipt: {
      text: `${state.decision.status} ${(state.amount_minor / 100).toFixed(2)} ${state.currency} card ****${state.card.last4}`,
      mode: state.decision.mode,
    },
  };
}
