/**
 * The broadcast phase machine: one command to every device matching a filter, rolled out
 * in phases — cumulative percentages of the targeted devices, e.g. [1, 10, 100] — with a
 * wait between phases and an automatic halt when a phase's failure rate exceeds the
 * threshold. The host (host.ts) picks each phase's devices, creates their commands and
 * feeds back the phase's command counts; the machine decides what happens next.
 *
 * | state     | event                                  | next                                          |
 * |-----------|----------------------------------------|-----------------------------------------------|
 * | pending   | bc.start (total)                       | launching phase 1                             |
 * | launching | bc.launched (size)                     | running                                       |
 * | running   | bc.progress: failed / size > threshold | halted (FAILURE_THRESHOLD)                    |
 * | running   | bc.progress: phase settled, last phase | completed                                     |
 * | running   | bc.progress: phase settled             | waiting until now + wait_seconds              |
 * | waiting   | bc.tick at or after the wait           | launching the next phase                      |
 * | running, waiting, launching | bc.pause             | halted (PAUSED)                               |
 * | halted    | bc.resume                              | running (a threshold halt is overridden for that phase) |
 * | not final | bc.cancel                              | cancelled                                     |
 *
 * A phase is settled when none of its commands is PENDING or DELIVERED. The halt is
 * decided as soon as the failures alone exceed the threshold — waiting for the rest of the
 * phase cannot bring the rate back under it. HALTED covers both an automatic halt and an
 * operator's pause (the status set has no PAUSED); `haltReason` tells them apart. Timers
 * are data (`nextPhaseAt`), driven by the gateway's clock, never XState delays, so a
 * restarted gateway continues where the snapshot says.
 */
import { assign, setup } from 'xstate';
import type { BroadcastEvent } from './events.js';

/** Commands of one phase by status. */
export interface BroadcastPhaseStats {
  pending: number;
  delivered: number;
  executed: number;
  failed: number;
  cancelled: number;
}

/** One phase as it ran. */
export interface BroadcastPhaseRecord {
  phase: number;
  /** Devices the phase sent the command to. */
  size: number;
  startedAt: string;
  finishedAt: string | null;
  stats: BroadcastPhaseStats;
}

/** Why a broadcast is HALTED. */
export type BroadcastHaltReason = 'FAILURE_THRESHOLD' | 'PAUSED';

/** What the broadcast machine remembers. */
export interface BroadcastMachineContext {
  /** Cumulative percentages of the targeted devices, strictly increasing, the last 100. */
  phases: number[];
  waitSeconds: number;
  /** Failure rate (0–1) above which a phase halts the broadcast; null: never. */
  threshold: number | null;
  /** Each command's retries and lifetime. */
  maxRetries: number;
  expiresInSeconds: number | null;
  /** Devices matching the filter when the broadcast started. */
  total: number;
  /** Current phase, 1-based; 0 before the start. */
  phase: number;
  nextPhaseAt: string | null;
  haltReason: BroadcastHaltReason | null;
  /** The phase whose threshold halt an operator overrode by resuming. */
  overridePhase: number | null;
  history: BroadcastPhaseRecord[];
}

const EMPTY: BroadcastPhaseStats = {
  pending: 0,
  delivered: 0,
  executed: 0,
  failed: 0,
  cancelled: 0,
};

const current = (c: BroadcastMachineContext) => c.history[c.phase - 1];

const statsOf = (event: BroadcastEvent) => (event.type === 'bc.progress' ? event.stats : undefined);

const settledStats = (s: BroadcastPhaseStats) => s.pending + s.delivered === 0;

function withStats(
  c: BroadcastMachineContext,
  stats: BroadcastPhaseStats,
  finishedAt: string | null,
): BroadcastPhaseRecord[] {
  return c.history.map((h) =>
    h.phase === c.phase ? { ...h, stats, finishedAt: finishedAt ?? h.finishedAt } : h,
  );
}

/** The broadcast machine. */
export const broadcastMachine = setup({
  types: {
    context: {} as BroadcastMachineContext,
    events: {} as BroadcastEvent,
    input: {} as BroadcastMachineContext,
  },
  guards: {
    exceedsThreshold: ({ context, event }) => {
      const stats = statsOf(event);
      const phase = current(context);
      return (
        stats !== undefined &&
        phase !== undefined &&
        context.threshold !== null &&
        context.overridePhase !== context.phase &&
        phase.size > 0 &&
        stats.failed / phase.size > context.threshold
      );
    },
    settledLast: ({ context, event }) => {
      const stats = statsOf(event);
      return stats !== undefined && settledStats(stats) && context.phase >= context.phases.length;
    },
    settled: ({ event }) => {
      const stats = statsOf(event);
      return stats !== undefined && settledStats(stats);
    },
    nextPhaseDue: ({ context, event }) =>
      event.type === 'bc.tick' &&
      context.nextPhaseAt !== null &&
      Date.parse(event.at) >= Date.parse(context.nextPhaseAt),
  },
  actions: {
    begin: assign(({ event }) =>
      event.type === 'bc.start' ? { total: event.total, phase: 1, nextPhaseAt: null } : {},
    ),
    recordLaunch: assign(({ context, event }) =>
      event.type === 'bc.launched'
        ? {
            history: [
              ...context.history.filter((h) => h.phase !== event.phase),
              {
                phase: event.phase,
                size: event.size,
                startedAt: event.at,
                finishedAt: null,
                stats: { ...EMPTY, pending: event.size },
              },
            ],
          }
        : {},
    ),
    recordStats: assign(({ context, event }) =>
      event.type === 'bc.progress' ? { history: withStats(context, event.stats, null) } : {},
    ),
    finishPhase: assign(({ context, event }) =>
      event.type === 'bc.progress' ? { history: withStats(context, event.stats, event.at) } : {},
    ),
    scheduleNext: assign(({ context, event }) =>
      event.type === 'bc.progress'
        ? { nextPhaseAt: new Date(Date.parse(event.at) + context.waitSeconds * 1000).toISOString() }
        : {},
    ),
    nextPhase: assign(({ context }) => ({ phase: context.phase + 1, nextPhaseAt: null })),
    haltOnFailures: assign({ haltReason: 'FAILURE_THRESHOLD' as const }),
    pause: assign({ haltReason: 'PAUSED' as const }),
    resume: assign(({ context }) => ({
      overridePhase:
        context.haltReason === 'FAILURE_THRESHOLD' ? context.phase : context.overridePhase,
      haltReason: null,
      nextPhaseAt: null,
    })),
  },
}).createMachine({
  id: 'broadcast',
  initial: 'pending',
  context: ({ input }) => input,
  on: {
    'bc.cancel': { target: '.cancelled' },
  },
  states: {
    pending: {
      on: { 'bc.start': { target: 'launching', actions: 'begin' } },
    },
    launching: {
      on: {
        'bc.launched': { target: 'running', actions: 'recordLaunch' },
        'bc.pause': { target: 'halted', actions: 'pause' },
      },
    },
    running: {
      on: {
        'bc.progress': [
          {
            guard: 'exceedsThreshold',
            target: 'halted',
            actions: ['recordStats', 'haltOnFailures'],
          },
          { guard: 'settledLast', target: 'completed', actions: 'finishPhase' },
          { guard: 'settled', target: 'waiting', actions: ['finishPhase', 'scheduleNext'] },
          { actions: 'recordStats' },
        ],
        'bc.pause': { target: 'halted', actions: 'pause' },
      },
    },
    waiting: {
      on: {
        'bc.tick': { guard: 'nextPhaseDue', target: 'launching', actions: 'nextPhase' },
        'bc.progress': { actions: 'recordStats' },
        'bc.pause': { target: 'halted', actions: 'pause' },
      },
    },
    halted: {
      on: {
        'bc.resume': { target: 'running', actions: 'resume' },
        'bc.progress': { actions: 'recordStats' },
      },
    },
    completed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});

/** The machine's states and the broadcast status each one means. */
export const BROADCAST_STATE_STATUS = {
  pending: 'PENDING',
  launching: 'IN_PROGRESS',
  running: 'IN_PROGRESS',
  waiting: 'WAITING_NEXT_PHASE',
  halted: 'HALTED',
  completed: 'COMPLETED',
  cancelled: 'CANCELLED',
} as const;
