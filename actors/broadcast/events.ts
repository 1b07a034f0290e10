/**
 * Events of the broadcast phase machine, built by typed constructors so no event name is a
 * string literal scattered through the gateway. Times are ISO 8601 strings: they go into
 * the persisted context as they are.
 */
import type { BroadcastPhaseStats } from './broadcastMachine.js';

/** Every event the broadcast machine accepts. */
export type BroadcastEvent =
  | { type: 'bc.start'; at: string; total: number }
  | { type: 'bc.launched'; at: string; phase: number; size: number }
  | { type: 'bc.progress'; at: string; stats: BroadcastPhaseStats }
  | { type: 'bc.tick'; at: string }
  | { type: 'bc.pause'; at: string }
  | { type: 'bc.resume'; at: string }
  | { type: 'bc.cancel'; at: string };

/** Constructors for {@link BroadcastEvent}s. */
export const bcEvents = {
  start: (at: Date, total: number): BroadcastEvent => ({
    type: 'bc.start',
    at: at.toISOString(),
    total,
  }),
  launched: (at: Date, phase: number, size: number): BroadcastEvent => ({
    type: 'bc.launched',
    at: at.toISOString(),
    phase,
    size,
  }),
  progress: (at: Date, stats: BroadcastPhaseStats): BroadcastEvent => ({
    type: 'bc.progress',
    at: at.toISOString(),
    stats,
  }),
  tick: (at: Date): BroadcastEvent => ({ type: 'bc.tick', at: at.toISOString() }),
  pause: (at: Date): BroadcastEvent => ({ type: 'bc.pause', at: at.toISOString() }),
  resume: (at: Date): BroadcastEvent => ({ type: 'bc.resume', at: at.toISOString() }),
  cancel: (at: Date): BroadcastEvent => ({ type: 'bc.cancel', at: at.toISOString() }),
};
