/** The compiled machine: its shape, and persist → restore → continue for every state. */
import { describe, expect, it } from 'vitest';
import {
  compileWorkflowMachine,
  initialWorkflowSnapshot,
  nextWorkflowSnapshot,
  persistWorkflowSnapshot,
  restoreWorkflowSnapshot,
  wfEvents,
  workflowPosition,
  workflowStatus,
} from '../../actors/index.js';
import { definition } from '../support/engine.js';

const DEF = `
workflow_type: shape.test
steps:
  - { name: start here, type: STANDARD, function: steps.mark, compensate_function: steps.noop }
  - name: decide
    type: DECISION
    function: steps.classify
    routes:
      - { condition: "state.band == 'high'", target: high }
      - default: low
  - { name: low, type: HUMAN_IN_LOOP, function: steps.ask_human }
  - { name: high, type: STANDARD, function: steps.mark }
`;

describe('workflow machine', () => {
  it('has one state per step, route transitions on the DECISION, and the four final states', async () => {
    const compiled = compileWorkflowMachine(await definition(DEF));
    const root = compiled.machine.root;
    expect(Object.keys(root.states)).toEqual([
      'start_here',
      'decide',
      'low',
      'high',
      'compensating',
      'completed',
      'failed',
      'rolledBack',
      'cancelled',
    ]);
    expect(compiled.keyOf('start here')).toBe('start_here');
    expect(root.states.decide!.meta).toEqual({ stepName: 'decide', kind: 'DECISION', index: 1 });
    const decideTargets = (root.states.decide!.on['wf.step.jumped'] ?? []).flatMap(
      (t) => t.target?.map((s) => s.key) ?? [],
    );
    expect(decideTargets).toEqual(['high', 'low']);
    expect(Object.keys(root.states.low!.states)).toEqual(['ready', 'waitingHuman', 'waitingChild']);
    for (const final of ['completed', 'failed', 'rolledBack', 'cancelled'])
      expect(root.states[final]!.type).toBe('final');
  });

  it('persists and restores every reachable state and continues from it', async () => {
    const compiled = compileWorkflowMachine(await definition(DEF));
    let s = initialWorkflowSnapshot(compiled);
    const seen: string[] = [];
    const roundTrip = () => {
      const persisted = JSON.parse(JSON.stringify(persistWorkflowSnapshot(s))) as unknown;
      s = restoreWorkflowSnapshot(compiled, persisted, 'wf-1');
      seen.push(`${workflowPosition(s).key}/${workflowPosition(s).sub ?? ''}:${workflowStatus(s)}`);
    };
    roundTrip();
    s = nextWorkflowSnapshot(s, wfEvents.stepCompleted('start here', 'steps.noop'));
    roundTrip();
    s = nextWorkflowSnapshot(s, wfEvents.stepJumped('decide', 'low'));
    roundTrip();
    s = nextWorkflowSnapshot(s, wfEvents.stepPaused('low'));
    roundTrip();
    s = nextWorkflowSnapshot(s, wfEvents.humanResumed());
    roundTrip();
    s = nextWorkflowSnapshot(
      s,
      wfEvents.stepFailed('low', { code: 'X', message: 'no', step: 'low' }),
    );
    roundTrip();
    s = nextWorkflowSnapshot(s, wfEvents.compensationRecorded());
    s = nextWorkflowSnapshot(s, wfEvents.compensated());
    roundTrip();
    expect(seen).toEqual([
      'start_here/ready:ACTIVE',
      'decide/ready:ACTIVE',
      'low/ready:ACTIVE',
      'low/waitingHuman:WAITING_HUMAN_INPUT',
      'low/ready:ACTIVE',
      'compensating/:FAILED',
      'rolledBack/:FAILED_ROLLED_BACK',
    ]);
    expect(s.snapshot.context).toMatchObject({
      saga: [],
      error: { code: 'X' },
      visits: { start_here: 1, decide: 1, low: 1 },
    });
  });

  it('refuses an event the current state does not accept', async () => {
    const compiled = compileWorkflowMachine(await definition(DEF));
    const s = initialWorkflowSnapshot(compiled);
    expect(() => nextWorkflowSnapshot(s, wfEvents.humanResumed())).toThrow(
      /does not accept wf.human.resumed/,
    );
  });

  it('rejects a snapshot of another definition', async () => {
    const a = compileWorkflowMachine(await definition(DEF));
    const b = compileWorkflowMachine(await definition(DEF.replace('steps.classify', 'steps.noop')));
    const persisted = persistWorkflowSnapshot(initialWorkflowSnapshot(a));
    expect(() => restoreWorkflowSnapshot(b, persisted, 'wf-2')).toThrow(/SNAPSHOT|definition/);
  });
});
