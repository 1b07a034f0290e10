/** Helpers for engine tests: a simulated clock, definitions from inline YAML, a runtime. */
import { fileURLToPath } from 'node:url';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../actors/index.js';
import {
  loadDefinition,
  mapSecrets,
  type Clock,
  type WorkflowDefinition,
} from '../../runtime/index.js';
import type { TestStore } from './stores.js';

/** Root of the engine test step modules. */
export const ENGINE_STEPS = fileURLToPath(new URL('../fixtures/engine/', import.meta.url));

/** A clock that only moves when something sleeps on it (or the test advances it). */
export interface FakeClock extends Clock {
  advance(ms: number): void;
  /** Every sleep requested, in milliseconds. */
  slept: number[];
}

/** A simulated clock starting at `start`. */
export function fakeClock(start = new Date('2026-01-01T00:00:00Z')): FakeClock {
  let now = start.getTime();
  const clock: FakeClock = {
    slept: [],
    now: () => new Date(now),
    advance: (ms) => void (now += ms),
    sleep: (ms) => {
      clock.slept.push(ms);
      now += Math.max(0, ms);
      return Promise.resolve();
    },
  };
  return clock;
}

/** A definition from inline YAML, validated against the engine test step modules. */
export async function definition(yaml: string): Promise<WorkflowDefinition> {
  return (await loadDefinition(yaml, { stepsRoot: ENGINE_STEPS })).definition;
}

/** A runtime over a test store with the simulated clock and the engine test steps. */
export function engineFor(handle: TestStore, options: Partial<RuntimeOptions> = {}): Runtime {
  return createRuntime({
    store: handle.store,
    stepsRoot: ENGINE_STEPS,
    clock: fakeClock(),
    // test upstreams listen on loopback: allowed, and the token bound to it
    secrets: mapSecrets({ API_TOKEN: { value: 's3cr3t-token', hosts: ['127.0.0.1'] } }),
    outbound: { allowedPrivateNetworks: ['loopback'] },
    onBackgroundError: (error) => {
      throw error;
    },
    ...options,
  });
}
