/**
 * When the chaos run strikes: SIGKILLs of a gateway, a worker and an agent host (each
 * restarted a few seconds later), the one PostgreSQL restart, the configuration publish, the
 * DIAGNOSTIC broadcast and the single commands — drawn at random (from the run's seed) inside
 * the chaos phase. The broadcast goes early and the PostgreSQL restart in the middle, so
 * both leave time for their consequences to play out before the final full cut.
 */
import type { ChaosSize } from './sizes.js';

/** One planned action. */
export type PlannedFault =
  | {
      kind: 'kill-gateway' | 'kill-worker' | 'kill-host';
      atMs: number;
      target: number;
      downMs: number;
    }
  | { kind: 'restart-postgres' | 'publish-config' | 'broadcast'; atMs: number }
  | { kind: 'command'; atMs: number; target: number };

/** Draw the plan of a run of `size` (targets are indexes: gateway 0–1, worker 0–1, host). */
export function planFaults(size: ChaosSize, random: () => number): PlannedFault[] {
  const ms = size.chaosSeconds * 1000;
  const within = (from: number, to: number) => Math.round(ms * (from + random() * (to - from)));
  const pick = (n: number) => Math.floor(random() * n);
  const downMs = () => 2_000 + Math.round(random() * 3_000);
  const plan: PlannedFault[] = [];
  // kills of the i-th round fall in the i-th slice of the first 70% of the phase: a process
  // takes a while to come back (a host resumes fifty agents), and the phase waits for it
  const slice = 0.7 / size.killsPerKind;
  for (let i = 0; i < size.killsPerKind; i++) {
    const from = 0.05 + i * slice;
    const to = from + slice;
    plan.push({
      kind: 'kill-host',
      atMs: within(from, from + slice / 2),
      target: pick(size.hosts),
      downMs: downMs(),
    });
    plan.push({ kind: 'kill-gateway', atMs: within(from, to), target: pick(2), downMs: downMs() });
    plan.push({ kind: 'kill-worker', atMs: within(from, to), target: pick(2), downMs: downMs() });
  }
  plan.push({ kind: 'restart-postgres', atMs: within(0.35, 0.55) });
  plan.push({ kind: 'broadcast', atMs: within(0.05, 0.15) });
  plan.push({ kind: 'publish-config', atMs: within(0.2, 0.4) });
  for (let i = 0; i < size.directCommands; i++)
    plan.push({ kind: 'command', atMs: within(0.05, 0.85), target: pick(size.agents) });
  return plan.sort((a, b) => a.atMs - b.atMs);
}
