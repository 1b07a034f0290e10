/**
 * The cloud's side of the demo: every few seconds a store's shift is settled by a
 * `store_settlement` workflow started through the API (examples/pos/store_settlement.yaml:
 * total, manager review of a large shift, settlement as a queued task, report), so the
 * dashboard's workflow list and live statechart have something moving. A simulated manager
 * approves a review after a few seconds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectOk, type DemoCloud } from './demoCloud.js';

/** The settlement workflow's type. */
export const SETTLEMENT_WORKFLOW = 'store_settlement';

/** Settlements of the demo's stores. */
export interface Settlements {
  /** Note an approved payment of a store (group). */
  add(group: number, amountMinor: number): void;
  /** Start the next store's settlement, approve reviews waiting long enough; call each second. */
  tick(nowMs: number): Promise<void>;
  /** Settlements started. */
  readonly started: number;
}

interface WorkflowItem {
  id: string;
  updated_at: string;
}

/** Register the settlement workflow and return the driver. */
export async function startSettlements(
  cloud: DemoCloud,
  exampleDir: string,
  stores: number,
  options: { everyMs: number; reviewAfterMs: number },
): Promise<Settlements> {
  await expectOk(
    'registering the settlement workflow',
    cloud.api('/api/v1/workflow-definitions', {
      method: 'POST',
      body: JSON.stringify({
        yaml: readFileSync(join(exampleDir, `${SETTLEMENT_WORKFLOW}.yaml`), 'utf8'),
      }),
    }),
  );
  const shifts: { amount_minor: number }[][] = Array.from({ length: stores }, () => []);
  let next = 0;
  let lastStart = 0;
  let started = 0;
  return {
    add(group, amountMinor) {
      // a bounded shift: the workflow state stays small
      if (shifts[group]!.length < 200) shifts[group]!.push({ amount_minor: amountMinor });
    },
    get started() {
      return started;
    },
    async tick(nowMs) {
      if (nowMs - lastStart >= options.everyMs) {
        lastStart = nowMs;
        const group = next;
        next = (next + 1) % stores;
        const payments = shifts[group]!.splice(0);
        await expectOk(
          'starting a settlement',
          cloud.api('/api/v1/workflows', {
            method: 'POST',
            body: JSON.stringify({
              workflow_type: SETTLEMENT_WORKFLOW,
              data: {
                store: `store-${String.fromCharCode(65 + group)}`,
                currency: 'EUR',
                payments,
              },
            }),
          }),
        );
        started++;
      }
      const waiting = await expectOk<{ items: WorkflowItem[] }>(
        'listing settlements waiting for a manager',
        cloud.api(
          `/api/v1/workflows?status=WAITING_HUMAN_INPUT&workflow_type=${SETTLEMENT_WORKFLOW}&limit=50`,
        ),
      );
      for (const w of waiting.items)
        if (nowMs - Date.parse(w.updated_at) >= options.reviewAfterMs)
          await expectOk(
            'approving a settlement',
            cloud.api(`/api/v1/workflows/${w.id}/resume`, {
              method: 'POST',
              body: JSON.stringify({ input: { approved: true, by: 'demo manager' } }),
            }),
          );
    },
  };
}
