/** The compiled machine: its shape, and persist → restore → continue for every state. */
import { describe, expect, it } from 'vitest';
import { transition, type AnyMachineSnapshot } from 'xstate';
import {
  compileWorkflowMachine,
  initialWorkflowSnapshot,
  nextWorkflowSnapshot,
  persistWorkflowSnapshot,
  restoreWorkflowSnapshot,
  wfEvents,
  workflowPosition,
  workflowStatus,
  type WorkflowEvent,
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

  describe('memoized restores and transitions', () => {
    /** The events of one run through DEF: the high route, then a failure that compensates. */
    const run: WorkflowEvent[] = [
      wfEvents.stepCompleted('start here', 'steps.noop'),
      wfEvents.stepJumped('decide', 'high'),
      wfEvents.stepFailed('high', { code: 'X', message: 'boom', step: 'high' }),
      wfEvents.compensationRecorded(),
      wfEvents.compensated(),
    ];
    const plain = (s: AnyMachineSnapshot): unknown => ({
      value: s.value as unknown,
      context: s.context as unknown,
    });

    it('gives the result XState computes, from the memo as from a first computation', async () => {
      const compiled = compileWorkflowMachine(await definition(DEF));
      const expected: unknown[] = [];
      // XState's own transition, which builds an actor per call and knows nothing of the memo
      let fresh = compiled.initialSnapshot();
      for (const event of run) {
        [fresh] = transition(compiled.machine, fresh, event);
        expected.push(plain(fresh));
      }
      for (let pass = 0; pass < 2; pass++) {
        let s = initialWorkflowSnapshot(compiled);
        run.forEach((event, i) => {
          s = nextWorkflowSnapshot(s, event);
          expect(plain(s.snapshot)).toEqual(expected[i]);
        });
        expect(workflowStatus(s)).toBe('FAILED_ROLLED_BACK');
      }
    });

    it('shares one snapshot between equal positions and keeps different ones apart', async () => {
      const compiled = compileWorkflowMachine(await definition(DEF));
      const a = nextWorkflowSnapshot(
        initialWorkflowSnapshot(compiled),
        wfEvents.stepCompleted('start here', 'steps.noop'),
      );
      const again = nextWorkflowSnapshot(
        initialWorkflowSnapshot(compiled),
        wfEvents.stepCompleted('start here', 'steps.noop'),
      );
      expect(again.snapshot).toBe(a.snapshot);
      // no compensation registered: another context, another snapshot
      const other = nextWorkflowSnapshot(
        initialWorkflowSnapshot(compiled),
        wfEvents.stepCompleted('start here'),
      );
      expect(other.snapshot).not.toBe(a.snapshot);
      expect((other.snapshot.context as { saga: unknown[] }).saga).toEqual([]);
      expect((a.snapshot.context as { saga: unknown[] }).saga).toHaveLength(1);

      const persisted = () => JSON.parse(JSON.stringify(persistWorkflowSnapshot(a))) as unknown;
      const r1 = restoreWorkflowSnapshot(compiled, persisted(), 'wf-1');
      const r2 = restoreWorkflowSnapshot(compiled, persisted(), 'wf-2');
      expect(r2.snapshot).toBe(r1.snapshot);
      expect(plain(r1.snapshot)).toEqual(plain(a.snapshot));
      // shared, so frozen: a change through one workflow cannot reach another
      expect(() => {
        (r1.snapshot.context as { visits: Record<string, number> }).visits.decide = 9;
      }).toThrow(TypeError);
      // an event the state does not accept is refused though that state has memoized others
      expect(() => nextWorkflowSnapshot(r1, wfEvents.humanResumed())).toThrow(/does not accept/);
    });

    it('never serves one compiled machine the snapshot of another', async () => {
      const first = compileWorkflowMachine(await definition(DEF));
      const second = compileWorkflowMachine(await definition(DEF));
      expect(second.hash).toBe(first.hash);
      const event = wfEvents.stepCompleted('start here', 'steps.noop');
      const a = nextWorkflowSnapshot(initialWorkflowSnapshot(first), event);
      const b = nextWorkflowSnapshot(initialWorkflowSnapshot(second), event);
      expect(b.snapshot).not.toBe(a.snapshot);
      expect(b.snapshot.machine).toBe(second.machine);
      const persisted = JSON.parse(JSON.stringify(persistWorkflowSnapshot(a))) as unknown;
      expect(restoreWorkflowSnapshot(second, persisted, 'wf-3').snapshot.machine).toBe(
        second.machine,
      );
    });
  });
});
