/**
 * The runtime's transitions reuse one inert scope per machine instead of XState's actor per
 * call; they must land exactly where XState's own `transition()` lands, however long the run
 * and whatever the events, on every kind of machine the runtime has.
 */
import { describe, expect, it } from 'vitest';
import { transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import {
  compileWorkflowMachine,
  devEvents,
  deviceMachine,
  wfEvents,
  type WorkflowEvent,
} from '../../actors/index.js';
import { pureInitialSnapshot, pureTransition } from '../../actors/pureTransition.js';
import { seededRandom } from '../chaos/seededRandom.js';
import { definition } from '../support/engine.js';

const view = (s: AnyMachineSnapshot) => ({
  value: s.value as unknown,
  context: s.context as unknown,
  status: s.status,
});

/** Drive both ways with `steps` events drawn from `candidates`; compare after each one. */
function compare(
  machine: AnyStateMachine,
  candidates: (s: AnyMachineSnapshot) => object[],
  steps: number,
  seed: number,
): { moves: number } {
  const next = seededRandom(seed);
  let ours = pureInitialSnapshot(machine);
  let theirs = ours;
  let moves = 0;
  for (let i = 0; i < steps && ours.status === 'active'; i++) {
    const options = candidates(ours);
    const event = options[Math.floor(next() * options.length)]!;
    const before = JSON.stringify(view(ours));
    ours = pureTransition(machine, ours, event as never);
    theirs = transition(machine, theirs, event as never)[0];
    expect(view(ours)).toEqual(view(theirs));
    if (JSON.stringify(view(ours)) !== before) moves++;
  }
  return { moves };
}

describe('pureTransition', () => {
  it('walks the device machine as XState does, over 2,000 random events', () => {
    const sessions = ['s1', 's2'];
    const events = [
      ...sessions.map(devEvents.connected),
      ...sessions.map(devEvents.disconnected),
      devEvents.syncStarted(),
      devEvents.syncFinished(),
      devEvents.stale(),
    ];
    const { moves } = compare(deviceMachine, () => events, 2000, 7);
    expect(moves).toBeGreaterThan(500);
  });

  it('walks a workflow machine as XState does: decisions, jumps, waits, failures, compensation', async () => {
    const compiled = compileWorkflowMachine(
      await definition(`
workflow_type: pure_demo
steps:
  - name: charge
    type: STANDARD
    function: steps.charge
    compensate_function: steps.refund
  - name: route
    type: DECISION
    function: steps.classify
    routes:
      - { condition: "state.band == 'high'", target: fan }
      - { default: ask }
  - { name: fan, type: PARALLEL, tasks: [{ name: a, function_path: steps.task_a }] }
  - { name: ask, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: ship, type: STANDARD, function: steps.ship }
`),
    );
    const steps = compiled.definition.steps.map((s) => s.name);
    const error = { code: 'STEP_FUNCTION_FAILED', message: 'no', step: 'x' };
    const candidates = (s: AnyMachineSnapshot): WorkflowEvent[] => {
      const all = steps.flatMap((step) => [
        wfEvents.stepCompleted(step, step === 'charge' ? 'steps.refund' : undefined),
        wfEvents.stepJumped(step, steps[(steps.indexOf(step) + 2) % steps.length]!),
        wfEvents.stepPaused(step),
        wfEvents.stepFailed(step, error),
        wfEvents.tasksDispatched(step, `${step}:1`),
        wfEvents.tasksCompleted(step),
      ]);
      all.push(
        wfEvents.humanResumed(),
        wfEvents.compensationRecorded(),
        wfEvents.compensated(),
        wfEvents.paused('x'),
        wfEvents.unpaused(),
      );
      // what the engine would send: events the current state accepts
      const accepted = all.filter((e) => s.can(e));
      return accepted.length > 0 ? accepted : all;
    };
    let moves = 0;
    for (let seed = 1; seed <= 40; seed++)
      moves += compare(compiled.machine, candidates, 60, seed).moves;
    expect(moves).toBeGreaterThan(100);
  });
});
