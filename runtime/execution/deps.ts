/**
 * What the engine takes from outside, injected so tests control time and identity (STYLE:
 * inject the clock and id source).
 */
import { randomUUID } from 'node:crypto';

/** Time source. */
export interface Clock {
  now(): Date;
  /** Resolve after `ms` milliseconds (or when `signal` aborts). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Identifier source. */
export interface Ids {
  uuid(): string;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(resolve, Math.max(0, ms));
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    }),
};

/** Random v4 UUIDs. */
export const randomIds: Ids = { uuid: () => randomUUID() };

/** Named points in the step commit path where a test may simulate a crash. */
export const FAULT_POINTS = ['before-step', 'before-commit', 'after-commit'] as const;
/** One of {@link FAULT_POINTS}. */
export type FaultPoint = (typeof FAULT_POINTS)[number];

/** A hook called at each fault point; throwing (or killing the process) simulates a crash. */
export type FaultHook = (
  point: FaultPoint,
  at: { workflowId: string; stepName: string },
) => void | Promise<void>;
