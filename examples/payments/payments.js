// Step functions of payment_authorization.yaml. Card data arrives tokenized: the workflow
// state keeps the token and the last four digits, never a card number.

export class WorkflowJumpDirective extends Error {
  name = 'WorkflowJumpDirective';
  constructor(target) {
    super(`jump to ${target}`);
    this.targetStepName = target;
  }
}

/** Reject malformed payments before anything else happens. */
export function validate_card(state, context) {
  const { amount_minor, card } = state;
  if (!Number.isInteger(amount_minor) || amount_minor <= 0)
    throw new Error('amount_minor must be a positive integer');
  if (!card || typeof card.token !== 'string' || !/^\d{4}$/.test(String(card.last4 ?? ''))) {
    throw new Error('card must carry a token and its last four digits');
  }
  if (card.expiry && !/^\d{2}\/\d{2}$/.test(card.expiry))
    throw new Error('card.expiry must be MM/YY');
  context.log.info('card accepted', { last4: card.last4 });
  return { card: { token: card.token, last4: card.last4, expiry: card.expiry ?? null } };
}

/** Record which path the payment takes; the routes decide. */
export function classify(state) {
  return {
    path: state.online
      ? 'online'
      : state.amount_minor <= state.floor_limit_minor
        ? 'offline'
        : 'over_floor',
  };
}

export function approve_offline(state, context) {
  context.log.info('approved offline under the floor limit', { amount_minor: state.amount_minor });
  state.decision = { status: 'APPROVED', mode: 'OFFLINE', reason: 'UNDER_FLOOR_LIMIT' };
  throw new WorkflowJumpDirective('receipt');
}

export function decline_over_floor(state) {
  state.decision = { status: 'DECLINED', mode: 'OFFLINE', reason: 'OVER_FLOOR_LIMIT' };
  throw new WorkflowJumpDirective('receipt');
}

/** Read the acquirer's answer; a decline ends the payment without capture. */
export function record_authorization(state) {
  const body = state.acquirer?.body ?? {};
  if (state.acquirer?.status_code !== 200 || body.approved !== true) {
    state.decision = {
      status: 'DECLINED',
      mode: 'ONLINE',
      reason: body.reason ?? `HTTP_${state.acquirer?.status_code}`,
    };
    throw new WorkflowJumpDirective('receipt');
  }
  return { authorization: { id: body.authorization_id, approved_at: body.approved_at ?? null } };
}

/** Compensation of record_authorization: release the hold on the customer's funds. */
export function void_authorization(state, context) {
  context.log.warn('voiding authorization', { authorization_id: state.authorization?.id });
  return {
    authorization: { ...state.authorization, voided: true },
    decision: { status: 'VOIDED', mode: 'ONLINE' },
  };
}

export function capture(state) {
  if (state.simulate_capture_failure) throw new Error('capture rejected by the acquirer');
  return {
    decision: { status: 'APPROVED', mode: 'ONLINE', authorization_id: state.authorization.id },
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
