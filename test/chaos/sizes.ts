/**
 * The chaos run's sizes. `ci` must finish in a few minutes on a shared 2-core machine while
 * still exercising every fault (≥ 200 agents); `large` is the documented longer run. Fault
 * times are fractions of the chaos phase so both sizes inject the same faults in the same
 * order, only spread over a longer window.
 */

/** How big and how long a run is. */
export interface ChaosSize {
  name: string;
  /** Edge agents (simulated terminals). */
  agents: number;
  /** Processes the agents are spread over. */
  hosts: number;
  /** Network groups: one TCP proxy each, each pointed at one gateway. */
  groups: number;
  /** Seconds of payments under faults, before the final full cut. */
  chaosSeconds: number;
  /** Seconds every group stays cut before the reconnect storm. */
  fullCutSeconds: number;
  /** Mean seconds between two payments at one terminal. */
  paymentGapSeconds: number;
  /** Cloud workflows (with an ASYNC step) started through the API during the run. */
  cloudWorkflows: number;
  /** Single commands sent to random devices (besides the broadcast). */
  directCommands: number;
  /** Longest wait for every queue to drain after the storm. */
  drainTimeoutSeconds: number;
  /** SIGKILLs (each followed by a restart) of a gateway, of a worker and of an agent host. */
  killsPerKind: number;
}

/** The sizes `--size` accepts (`smoke` is a quick look while working on the harness). */
export const CHAOS_SIZES = {
  smoke: {
    name: 'smoke',
    agents: 24,
    hosts: 2,
    groups: 4,
    chaosSeconds: 40,
    fullCutSeconds: 6,
    paymentGapSeconds: 4,
    cloudWorkflows: 20,
    directCommands: 6,
    drainTimeoutSeconds: 120,
    killsPerKind: 1,
  },
  ci: {
    name: 'ci',
    agents: 200,
    hosts: 4,
    groups: 8,
    chaosSeconds: 60,
    fullCutSeconds: 10,
    paymentGapSeconds: 12,
    cloudWorkflows: 60,
    directCommands: 20,
    drainTimeoutSeconds: 150,
    killsPerKind: 1,
  },
  large: {
    name: 'large',
    agents: 400,
    hosts: 5,
    groups: 10,
    chaosSeconds: 180,
    fullCutSeconds: 15,
    paymentGapSeconds: 15,
    cloudWorkflows: 200,
    directCommands: 40,
    // the webhook backlog of a congested cloud takes minutes to deliver (one request in flight
    // per registration)
    drainTimeoutSeconds: 600,
    killsPerKind: 2,
  },
} as const satisfies Record<string, ChaosSize>;

/** A size name. */
export type ChaosSizeName = keyof typeof CHAOS_SIZES;

/** Whether `name` is a size. */
export function isChaosSizeName(name: string): name is ChaosSizeName {
  return Object.hasOwn(CHAOS_SIZES, name);
}
