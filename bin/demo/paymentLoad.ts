/**
 * Customers at the demo's terminals: each terminal takes a payment every second or so —
 * mostly small amounts under the floor limit, some above it, a few large ones — through its
 * agent, the way a POS application would through the local API. A payment the fraud rules
 * send to review is answered by a simulated cashier.
 */
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { EdgeAgent, LocalRunOutcome } from '../../edge/index.js';
import type { JsonObject, WorkflowRecord } from '../../runtime/index.js';
import type { PaymentCounts } from './demoStats.js';

/** The workflow type of the POS example the terminals run. */
export const PAYMENT_WORKFLOW = 'pos_payment';

/** An acquirer's authorization host, for the online path: approves up to 1,000.00. */
export async function startFakeAcquirer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      let amount = Number.NaN;
      try {
        amount = Number((JSON.parse(body) as { amount_minor?: unknown }).amount_minor);
      } catch {
        // a malformed request is declined below
      }
      const approved = Number.isFinite(amount) && amount <= 100_000;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          approved
            ? { approved, authorization_id: randomUUID() }
            : { approved, reason: 'LIMIT_EXCEEDED' },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A payment's data, drawn at random. */
export function drawPayment(random: () => number, acquirerUrl: string): JsonObject {
  const r = random();
  // 70% under the 50.00 floor, 22% up to 200.00, 8% up to 1,500.00
  const amount =
    r < 0.7
      ? 200 + Math.floor(random() * 4_800)
      : r < 0.92
        ? 5_000 + Math.floor(random() * 15_000)
        : 20_000 + Math.floor(random() * 130_000);
  const attempts = random() < 0.85 ? 0 : 1 + Math.floor(random() * 5);
  return {
    amount_minor: amount,
    currency: 'EUR',
    attempts_last_hour: attempts,
    card: {
      // a UUID, not a run of hex digits: one 16-hex token in about 1,300 holds 13+ decimal
      // digits that pass Luhn, which the agent rightly refuses as a card number in clear
      token: `tok_${randomUUID()}`,
      last4: String(Math.floor(random() * 10_000)).padStart(4, '0'),
    },
    acquirer_url: acquirerUrl,
  };
}

/** Why `record` counts as failed — its status and the step it stopped at — or undefined. */
export function failureReason(record: WorkflowRecord): string | undefined {
  const decision = (record.state as { decision?: unknown }).decision;
  if (record.status !== 'COMPLETED') return `${record.status} at ${record.currentStep ?? 'start'}`;
  return decision ? undefined : 'completed without a decision';
}

/** Count one finished payment. */
export function countOutcome(counts: PaymentCounts, record: WorkflowRecord): void {
  const decision = (record.state as { decision?: { status?: unknown; mode?: unknown } }).decision;
  if (failureReason(record) !== undefined || !decision) counts.failed++;
  else if (decision.status !== 'APPROVED') counts.declined++;
  else if (decision.mode === 'ONLINE') counts.approvedOnline++;
  else counts.approvedOffline++;
}

/** A short name for an error the agent threw: its code when it has one. */
function errorReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'error';
}

/** Run payments on `agent` until `signal` aborts; resolves when the last one ended. */
export async function runPayments(
  agent: EdgeAgent,
  options: {
    counts: PaymentCounts;
    random: () => number;
    acquirerUrl: string;
    meanGapMs: number;
    signal: AbortSignal;
    /** Told about each payment that ran to its end. */
    onFinished?: (record: WorkflowRecord) => void;
    /** Told why each failed payment failed (`FAILED at authorize`, an error code). */
    onFailed?: (reason: string) => void;
    onError?: (error: unknown) => void;
  },
): Promise<void> {
  const { counts, random, signal } = options;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  await pause(random() * options.meanGapMs);
  while (!signal.aborted) {
    try {
      const outcome: LocalRunOutcome = await agent.runWorkflow({
        workflowType: PAYMENT_WORKFLOW,
        data: drawPayment(random, options.acquirerUrl),
      });
      if (outcome.kind === 'declined') counts.limited++;
      else {
        let record = outcome.record;
        // the cashier checks the ID and mostly lets the payment go on
        if (record.status === 'WAITING_HUMAN_INPUT')
          record = await agent.resumeWorkflow(record.id, { approved: random() < 0.85 });
        countOutcome(counts, record);
        const reason = failureReason(record);
        if (reason !== undefined) options.onFailed?.(reason);
        options.onFinished?.(record);
      }
    } catch (error) {
      counts.failed++;
      options.onFailed?.(errorReason(error));
      options.onError?.(error);
    }
    await pause(options.meanGapMs * (0.5 + random()));
  }
}
