// Step functions of loan_application.yaml and credit_check.yaml.

class Directive extends Error {
  constructor(name, fields) {
    super(name);
    this.name = name;
    Object.assign(this, fields);
  }
}
const jump = (target) => new Directive('WorkflowJumpDirective', { targetStepName: target });
const pause = (result = {}) => new Directive('WorkflowPauseDirective', { result });
const subWorkflow = (workflowType, initialData) =>
  new Directive('StartSubWorkflowDirective', { workflowType, initialData });

export function collect_application(state) {
  const { applicant, amount } = state;
  if (!applicant?.id || !Number.isFinite(applicant.income))
    throw new Error('applicant.id and applicant.income are required');
  if (!Number.isFinite(amount) || amount <= 0) throw new Error('amount must be a positive number');
  return { debts: applicant.debts ?? [], submitted: true };
}

export function start_credit_check(state) {
  throw subWorkflow('credit_check', {
    applicant_id: state.applicant.id,
    income: state.applicant.income,
    debts: state.debts,
    amount: state.amount,
  });
}

export function summarize_credit(state) {
  const result = state.sub_workflow_results?.credit_check ?? {};
  return { credit_score: result.score, debt_to_income: result.debt_to_income };
}

/** Pause for an underwriter unless a decision has been given with the resume. */
export function request_review(state, context) {
  const input = context.input;
  if (!input?.decision)
    throw pause({ review_requested: { score: state.credit_score, amount: state.amount } });
  if (!['approve', 'reject'].includes(input.decision))
    throw new Error("decision must be 'approve' or 'reject'");
  return {
    review: {
      decision: input.decision,
      reviewer: input.reviewer ?? 'unknown',
      note: input.note ?? null,
    },
  };
}

export function read_review() {}

export function approve(state) {
  state.outcome = 'APPROVED';
  throw jump('notify_applicant');
}

export function reject(state) {
  state.outcome = 'REJECTED';
  throw jump('notify_applicant');
}

export function notify_applicant(state, context) {
  context.log.info(`applicant ${state.applicant.id} notified: ${state.outcome}`);
  return { notified: true };
}

export function add_debt(state, context) {
  const debt = context.debt;
  return { total_debt: (state.total_debt ?? 0) + Number(debt.monthly_payment ?? 0) };
}

export function score(state) {
  const dti = state.income > 0 ? (state.total_debt ?? 0) / (state.income / 12) : 1;
  const score = Math.max(
    300,
    Math.min(850, Math.round(850 - dti * 600 - (state.amount / state.income) * 100)),
  );
  return { debt_to_income: Math.round(dti * 1000) / 1000, score };
}
