/**
 * The heartbeat pulse: while this node drives workflows, their `workflow_heartbeats` rows
 * are refreshed every half interval — also during a step that runs longer than the zombie
 * threshold, so a slow step is never mistaken for a dead driver. Only workflows inside a
 * drive right now are refreshed, and only rows this node still owns: a drive that died on
 * an error leaves its row to go stale, and the zombie scanner picks the workflow up.
 */
import { createBackgroundLoop, refreshHeartbeats } from '../../runtime/index.js';
import type { Internals } from './internals.js';

/** What the pulse reads. */
type PulseParts = Pick<
  Internals,
  'store' | 'clock' | 'workerId' | 'onError' | 'heartbeatIntervalMs' | 'driving' | 'lastBeat'
>;

/** Start pulsing; returns a function that stops the pulse and waits for one in flight. */
export function startHeartbeatPulse(internals: PulseParts): () => Promise<void> {
  const half = Math.max(50, internals.heartbeatIntervalMs / 2);
  const pulse = async () => {
    const now = internals.clock.now();
    const due = [...internals.driving].filter((id) => {
      const last = internals.lastBeat.get(id);
      return last !== undefined && now.getTime() - last >= half;
    });
    if (due.length === 0) return;
    const refreshed = await refreshHeartbeats(internals.store, internals.workerId, due, now);
    for (const id of refreshed) internals.lastBeat.set(id, now.getTime());
  };
  const loop = createBackgroundLoop({
    intervalMs: half,
    pass: pulse,
    onError: (error) => internals.onError(error, internals.workerId),
  });
  loop.start();
  return () => loop.stop();
}
