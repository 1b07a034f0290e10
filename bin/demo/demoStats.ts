/**
 * What the demo counts and how it prints it: the payment outcomes the simulated customers
 * saw, and the fleet's store-and-forward picture (backlog on the devices, records the cloud
 * holds, records it refused).
 */

/** Payment outcomes as the terminals reported them. */
export interface PaymentCounts {
  approvedOnline: number;
  approvedOffline: number;
  declined: number;
  /** Declined before running: a store-and-forward risk limit was reached. */
  limited: number;
  /** Workflows that ended FAILED (or errors from the agent). */
  failed: number;
}

/** One line of the live summary. */
export interface DemoSnapshot {
  elapsedSeconds: number;
  devices: number;
  online: number;
  payments: PaymentCounts;
  /** Records waiting on the devices. */
  backlog: number;
  /** Records the cloud holds for the demo's devices. */
  synced: number;
  /** Most recent fleet event (config published, fraud rule updated, …). */
  lastEvent: string | undefined;
  /** Why payments failed, with how many failed that way. */
  failureReasons?: ReadonlyMap<string, number>;
}

/** Fresh counters. */
export function emptyCounts(): PaymentCounts {
  return { approvedOnline: 0, approvedOffline: 0, declined: 0, limited: 0, failed: 0 };
}

/** Payments that reached an outcome. */
export function totalPayments(c: PaymentCounts): number {
  return c.approvedOnline + c.approvedOffline + c.declined + c.limited + c.failed;
}

/** The live summary line. */
export function formatSnapshot(s: DemoSnapshot): string {
  const p = s.payments;
  const parts = [
    `${String(Math.round(s.elapsedSeconds)).padStart(4)}s`,
    `online ${s.online}/${s.devices}`,
    `payments ${totalPayments(p)}`,
    `approved ${p.approvedOnline} online + ${p.approvedOffline} offline`,
    `declined ${p.declined + p.limited}${p.limited ? ` (${p.limited} by SAF limits)` : ''}`,
    ...(p.failed ? [`failed ${p.failed}${describeFailures(s.failureReasons)}`] : []),
    `SAF backlog ${s.backlog}`,
    `synced ${s.synced}`,
  ];
  return parts.join(' | ') + (s.lastEvent ? ` | ${s.lastEvent}` : '');
}

/** ` (FAILED at authorize ×3, TIMEOUT ×1, …)`: the two commonest reasons, most frequent first. */
function describeFailures(reasons: ReadonlyMap<string, number> | undefined): string {
  if (!reasons || reasons.size === 0) return '';
  const sorted = [...reasons].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, 2).map(([reason, n]) => `${reason} ×${n}`);
  if (sorted.length > 2) shown.push(`${sorted.length - 2} more`);
  return ` (${shown.join(', ')})`;
}
