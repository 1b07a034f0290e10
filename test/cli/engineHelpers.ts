/** Shared pieces of the engine command tests: example paths, data, and JSON output parsing. */
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { CliRun } from '../support/cli.js';

/** Folder of the payments example. */
export const paymentsDir = fileURLToPath(new URL('../../examples/payments/', import.meta.url));
/** The payment workflow definition. */
export const paymentYaml = `${paymentsDir}payment_authorization.yaml`;
/** Folder of the loans example (loan_application + credit_check). */
export const loansDir = fileURLToPath(new URL('../../examples/loans/', import.meta.url));
/** The loan workflow definition. */
export const loanYaml = `${loansDir}loan_application.yaml`;

/** A card payment of `amountMinor` (offline: approved up to the 5000 floor limit). */
export function payment(amountMinor: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    amount_minor: amountMinor,
    card: { token: 'tok_1', last4: '4242' },
    ...extra,
  });
}

/**
 * A loan that scores 685 in loans.js `score()`: debt-to-income 500 / (40000 / 12) = 0.15,
 * 850 - 0.15 × 600 - 30000 / 40000 × 100 = 685, between auto-reject (500) and auto-approve
 * (700), so it waits for an underwriter.
 */
export const reviewLoan = JSON.stringify({
  applicant: {
    id: 'app-1',
    income: 40000,
    debts: [{ monthly_payment: 300 }, { monthly_payment: 200 }],
  },
  amount: 30000,
});

/** What `--json` prints for one workflow. */
export interface WorkflowJson {
  id: string;
  workflow_type: string;
  workflow_version: string | null;
  status: string;
  current_step: string | null;
  current_step_index: number;
  state: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  error?: { code: string; message: string; step: string | null };
  audit?: { timestamp: string; event_type: string; step_name: string | null; data: unknown }[];
}

/** Parse a `--json` workflow, failing with the CLI's output when it is not one. */
export function workflowOf(run: CliRun): WorkflowJson {
  let parsed: WorkflowJson;
  try {
    parsed = JSON.parse(run.stdout) as WorkflowJson;
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  expect(typeof parsed.id).toBe('string');
  return parsed;
}
