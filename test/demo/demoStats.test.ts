/**
 * The demo's summary line says what failed, not only how many: the commonest reasons with
 * their counts.
 */
import { describe, expect, it } from 'vitest';
import { emptyCounts, formatSnapshot } from '../../bin/demo/demoStats.js';
import { failureReason } from '../../bin/demo/paymentLoad.js';
import type { WorkflowRecord } from '../../runtime/index.js';

const snapshot = (failed: number, failureReasons?: Map<string, number>) => ({
  elapsedSeconds: 12,
  devices: 4,
  online: 3,
  payments: { ...emptyCounts(), approvedOnline: 5, failed },
  backlog: 2,
  synced: 7,
  lastEvent: undefined,
  ...(failureReasons ? { failureReasons } : {}),
});

describe('demo summary', () => {
  it('names the commonest failure reasons next to the count', () => {
    const reasons = new Map([
      ['INFERENCE_TIMEOUT', 1],
      ['FAILED at authorize', 3],
      ['SAF_LIMIT', 1],
    ]);
    const line = formatSnapshot(snapshot(5, reasons));
    expect(line).toContain('failed 5 (FAILED at authorize ×3, INFERENCE_TIMEOUT ×1, 1 more)');
  });

  it('leaves failures out when there are none', () => {
    expect(formatSnapshot(snapshot(0))).not.toContain('failed');
  });

  it('tells a failed workflow by its status and step', () => {
    const record = { status: 'FAILED', currentStep: 'authorize', state: {} } as Pick<
      WorkflowRecord,
      'status' | 'currentStep' | 'state'
    > as WorkflowRecord;
    expect(failureReason(record)).toBe('FAILED at authorize');
    expect(failureReason({ ...record, status: 'COMPLETED' })).toBe('completed without a decision');
    expect(
      failureReason({
        ...record,
        status: 'COMPLETED',
        state: { decision: { status: 'APPROVED' } },
      }),
    ).toBeUndefined();
  });
});
