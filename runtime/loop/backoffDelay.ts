/**
 * Exponential back-off with jitter. Half of each delay is fixed and half random, so that
 * many processes that failed at the same moment (a fleet losing its network, gateways
 * losing the database) do not all come back at the same moment and fail together again.
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
