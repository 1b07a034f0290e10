/**
 * Exponential backoff with jitter for reconnects and retries. Half of each delay is fixed
 * and half random (the cloud's own redelivery uses the same shape), so a fleet that lost
 * its network at the same moment does not come back at the same moment: without jitter,
 * ten thousand terminals reconnect in lock-step after an outage and knock the gateway over
 * again.
 */

/** How delays grow. */
export interface BackoffPolicy {
  /** Delay after the first failure, before jitter. */
  baseMs: number;
  /** Largest delay, before jitter. */
  maxMs: number;
}

/**
 * The delay after `failures` consecutive failures (1 = the first): `min(max, base · 2^(n-1))`,
 * of which a random half is taken away. `random` returns a number in [0, 1).
 */
export function backoffDelay(
  policy: BackoffPolicy,
  failures: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
